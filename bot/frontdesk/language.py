"""One language per person: which of ``zh`` and ``en`` PCAI speaks to someone, everywhere.

The rule, first that applies: the language they chose (``/lang``, the memory page's switch);
the language they last wrote a real sentence in (two Chinese characters or three English
words; remembered, so a bare ``/help``, an "ok" or a button press keeps it); their Telegram
client's language (``zh*`` is Chinese, any other code English); English. What they write
comes before the client's setting because many people here keep their phone in English and
write Chinese. Chat, help, buttons, refusals, reminders and the page all
take it from here, so one person never gets half of one language and half of another.
"""

from __future__ import annotations

import logging
import re
import threading

from agent.prompt import detect_language
from bot.frontdesk.language_book import LanguageBook, UserLanguage
from memory.base.lru import CappedMap

log = logging.getLogger(__name__)

LANGS = ("zh", "en")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
# "/help", "m-20261125-ab12cd", "9am": commands, ids and numbers say nothing of a language.
_NOT_WORDS = re.compile(r"(?:^|\s)(?:/\S*|[!-~]*\d[!-~]*)")


def written_language(text: str) -> str | None:
    """The language of ``text`` (mostly Chinese characters: ``zh``, else ``en``), or None when
    it is too short to tell (an id, a number, "ok", "好")."""
    text = _NOT_WORDS.sub(" ", text)
    if len(_CJK.findall(text)) < 2 and len(_LATIN_WORD.findall(text)) < 3:
        return None
    return detect_language(text)


def client_language(code: str | None) -> str | None:
    """A Telegram client's ``language_code`` as ``zh`` / ``en`` (None when it says none)."""
    if not code:
        return None
    return "zh" if code.lower().startswith("zh") else "en"


def spoken_to(languages: Languages | None, user_key: str) -> str:
    """:meth:`Languages.spoken` where the languages may not be wired (English then)."""
    return languages.spoken(user_key) if languages is not None else "en"


def parse_choice(arg: str) -> str | None:
    """What ``/lang <arg>`` names: ``zh`` / ``中文`` / ``en`` / ``English`` …, else None."""
    word = arg.strip().lower()
    if word in ("zh", "中文", "chinese", "zh-tw", "zh-hant", "繁體", "繁體中文", "tw"):
        return "zh"
    if word in ("en", "english", "英文", "eng"):
        return "en"
    return None


class Languages:
    """Each person's language, kept in ``pcai.db`` (a cache in front: read on every message)."""

    def __init__(self, book: LanguageBook | None = None) -> None:
        self.book = book
        # A fixed number of people (read again from pcai.db past it).
        self._known: CappedMap[str, UserLanguage | None] = CappedMap()
        self._lock = threading.Lock()

    def _stored(self, user_key: str) -> UserLanguage | None:
        with self._lock:
            if user_key in self._known:
                return self._known.get(user_key)
        found = self.book.get(user_key) if self.book is not None else None
        with self._lock:
            self._known[user_key] = found
        return found

    def _put(self, user_key: str, lang: str, chosen: bool) -> None:
        if self.book is not None:
            try:
                self.book.put(user_key, lang, chosen=chosen)
            except Exception as exc:  # a full disk (any SQLite driver): the turn is answered
                log.warning("%s: the language could not be stored: %s", user_key, exc)
        with self._lock:
            self._known[user_key] = UserLanguage(lang, chosen)

    def of(self, user_key: str, code: str | None = None, text: str = "") -> str:
        """The language to speak to ``user_key`` (the rule in the module docstring)."""
        stored = self._stored(user_key)
        if stored is not None and stored.chosen:
            return stored.lang
        written = written_language(text)
        if written is not None:
            if stored is None or stored.lang != written:
                self._put(user_key, written, False)
            return written
        if stored is not None:
            return stored.lang
        client = client_language(code)
        if client is None:
            return "en"
        self._put(user_key, client, False)  # for what a job sends them later
        return client

    def spoken(self, user_key: str) -> str:
        """The language of what a job sends ``user_key`` (no message at hand): theirs by the
        rule, English when nothing is known. Never both: one person, one language."""
        return self.of(user_key)

    def choose(self, user_key: str, lang: str) -> None:
        """The person's own choice: it wins over everything else from now on."""
        if lang not in LANGS:
            raise ValueError(lang)
        self._put(user_key, lang, True)
