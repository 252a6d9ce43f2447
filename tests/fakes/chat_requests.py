"""What a recorded chat request asks, read as a model would (for the fakes' scripted models).

A compaction summary is asked after the conversation's own prompt (docs/prompt.md): its
instruction closes the request instead of opening it.
"""

from __future__ import annotations

import re
from typing import Any


def instruction_of(body: dict[str, Any]) -> str:
    """A request's instruction: its system text, or, for a compaction summary sent after the
    conversation's own prompt (docs/prompt.md), the summary instruction that closes it."""
    first = str(body["messages"][0].get("content", ""))
    last = str(body["messages"][-1].get("content", ""))
    if body["messages"][-1].get("role") == "user" and "Summarise the conversation above" in last:
        return last[last.find("Summarise this conversation") :]
    return first


def summarised_lines(body: dict[str, Any]) -> list[str]:
    """The conversation lines a summary request asks about, as an obedient model reads them:
    the transcript of a request of its own, or, after a conversation's prompt, the messages
    through the one its closing names (and the earlier ones the closing quotes)."""
    messages = body["messages"]
    last = str(messages[-1].get("content", ""))
    if "Summarise the conversation above" not in last:
        return [ln for ln in last.splitlines()[1:] if ln.strip()]
    quoted = re.search(r"«(.*?)»", last)
    lines = [ln for ln in last.split("\nSummarise the conversation above")[0].splitlines()]
    lines = [ln for ln in lines if ln.startswith(("User: ", "AI: ", "Tool: ", "(Earlier"))]
    for m in messages[1:-1]:
        text = str(m.get("content", ""))
        lines.append(text)
        plain = " ".join(re.sub(r"^\[(Old|Tool)\] ", "", text).split())
        if quoted and quoted.group(1) and plain.startswith(quoted.group(1)):
            break
    return lines
