"""Every sentence PCAI says, in English; ``{field}`` marks a placeholder."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    # -- the bot: commands, buttons, confirmations (bot/)
    "welcome": (
        "Hi! I'm PCAI, and I remember what you confirm. Just talk to me, or type /help. "
        "(中文：/lang zh)"
    ),
    "stranger": "Sorry, this bot only serves its owner.",
    "text_only": "Text only for now.",
    "error": "Sorry, something went wrong on my side.",
    # -- turns the bot could not answer at once (bot/telegram/queues.py, errors.py)
    "flood_skipped": (
        "You sent many messages at once: I answer your text together, but skipped the other "
        "messages and commands sent meanwhile; send them again once I have answered."
    ),
    "press_skipped": "Too much at once: press it again once I have answered.",
    "turn_lost": (
        "I stopped before answering your message of {time} (“{text}”); please send it again."
    ),
    "disk_full": (
        "I could not save your message: the disk of the machine I run on is full. Nothing was "
        "stored; your message is still here in the chat, so send it again once there is room."
    ),
    "group_private": (
        "Memories are only used in a private chat with me; please message me directly."
    ),
    "no_memories": "No memories yet. Use /remember.",
    "usage_search": "Usage: /search <query>",
    "usage_remember": "Usage: /remember <text>",
    "usage_remind": "Usage: /remind <when> <what>, e.g. /remind tomorrow 9am call mom",
    "not_a_reminder_id": "“{what}” is not a reminder number: /reminders lists them with theirs.",
    "usage_forget": "Usage: /forget <id> (see /memory)",
    "usage_history": "Usage: /history <topic>",
    "nothing_found": "Nothing found.",
    "found_said": "said in conversation on {day}, not a memory",
    "no_pending": "Nothing is waiting for confirmation.",
    "which_pending": (
        "Several memories are waiting; which one do you mean? Press the button under it, reply to "
        "it, or type /confirm <id>."
    ),
    "which_pending_typed": (
        "Several memories are waiting; which one do you mean? Type /confirm <id> or /discard <id>."
    ),
    "this_pending_typed": (
        "Do you mean this memory that is waiting? Type /confirm <id> or /discard <id>."
    ),
    "this_pending": (
        "Do you mean this memory that is waiting? Press a button under it, or reply to it."
    ),
    "no_why": "No memories shaped the last reply.",
    "why_head": "Memories used for the last reply:",
    "confirmed": "✅ Remembered: ",
    "remembered_now": (
        "✅ Remembered: {text} ({entry_id}). Not what you meant? /undo within {minutes} minutes "
        "takes it back."
    ),
    "reminder_set_now": "{said} (/undo within {minutes} minutes cancels it)",
    "rejected": "🗑 Discarded: ",
    "expired": "⌛ This proposal expired; nothing was saved.",
    "button_stale": "That button no longer works.",
    "missing": "That proposal is gone (already handled?).",
    "edit_prompt": "✏️ Reply to this message with the new text.",
    "edited": "Edited; please confirm again:",
    "propose_head": "📝 Remember this?",
    "expires": "expires {time}",
    "web_link": "Your memory page (this link opens once, within 10 minutes):\n{url}",
    "web_off": "The memory page is not running (see PCAI_WEB_ENABLED and PCAI_WEB_PORT).",
    "web_local": (
        "This address opens only on the machine running PCAI; to open it on your phone, set "
        "PCAI_WEB_HOST and PCAI_WEB_PUBLIC_URL (see the README)."
    ),
    "export_caption": "Your memories (Markdown)",
    "stats_head": "Stats",
    "no_such_page": "There is no page {page}: your memories fill {pages} (/memory {pages}).",
    "usage_memory": "Usage: /memory [page], e.g. /memory 2",
    "page": "page {page}/{pages}, next: /memory {next}",
    "needs_ollama": (
        "Chat needs Ollama at {url}, which does not answer: run `ollama serve` and "
        "`ollama pull {model}`. Memory commands still work (/help)."
    ),
    "needs_server": (
        "Chat needs the OpenAI-compatible server at {url} (PCAI_LLM_BACKEND=openai), which "
        "does not answer: start it (`llama-server`, `vllm serve` or `lms server start`) with "
        "the model {model}, or set PCAI_LLM_BASE_URL. Memory commands still work (/help)."
    ),
    "model_still_down": "No answer: the model server at {url} still does not answer.",
    "model_none_found": (
        "No model server answers at {places}: start one, then PCAI again — Ollama: "
        "`ollama serve` and `ollama pull {model}`; llama.cpp: `make llama-server` and the "
        "command it prints; LM Studio: `lms server start`; vLLM: `vllm serve "
        "Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes` "
        "(memory commands work without one, /help)."
    ),
    "help_head": "PCAI — commands",
    "lang_set": "From now on I speak English with you (/lang zh for Chinese).",
    "lang_now": "I speak English with you. /lang zh switches to Chinese, /lang en back.",
    "unknown_command": "I don't know the command /{name}. /help lists the commands.",
    "help_footer": (
        "Plain text is a chat; what I offer to remember is saved only once you confirm."
    ),
    "button_confirm": "✅ Confirm",
    "button_edit": "✏️ Edit",
    "button_discard": "🗑 Discard",
    "chat_how_to_answer": "Type yes or /confirm {id}; /discard {id} to drop it",
    "stats_topic": "topic",
    "stats_prune": "unused sections",
    "stats_prune_advice": "unused for several turns: merge or drop?",
    "no_history_topic": "No memory about {topic!r}.",
    "proposal_expiry_notice": "⌛ A memory proposal expired and was not saved: “{short}”",
    "lost_proposals": (
        "My state database was damaged and rebuilt: your pending memory proposals {shown}{more} "
        "were lost and not saved; ask me to remember them again."
    ),
    # -- governance from chat: pin, scope, edit, archived/restore, keep (bot/, issue 13)
    "usage_pin": "Usage: /pin <id> (see /memory)",
    "usage_unpin": "Usage: /unpin <id> (see /memory)",
    "usage_edit": "Usage: /edit <id> <new text>",
    "usage_scope": "Usage: /scope <id> project:<name> | lang:<name> | global",
    "usage_restore": "Usage: /restore <id> (see /archived)",
    "usage_keep": "Usage: /keep <id>",
    "pinned": "📌 Pinned; it goes into every reply now: ",
    "unpinned": "📍 Unpinned: ",
    "scoped": "🏷 Scope is now {scope}: ",
    "revised": "✏️ Edited ({new} replaces {old}): ",
    "kept": "✅ I'll keep remembering: ",
    "restored": "♻️ Restored: ",
    "no_archived": "No archived memories.",
    "archived_head": "Archived memories (/restore <id> brings one back):",
    "memory_legend": "📌 pin · 📍 unpin · ✏️ edit · 🗑 forget (/undo brings it back)",
    "revise_prompt": "✏️ Reply to this message with the new text for {entry_id}.",
    "replaced": " (replaces {ids})",
    "button_add": "➕ Add",
    "button_replace": "🔁 Replace",
    "keep_word": "keep",
    "fading_head": (
        "🍂 These memories have not been used in a long time and will be archived in a week (no "
        "longer searched; /restore brings one back). Keep them?"
    ),
    "proposal_weight": "⭐ weight {weight}/10",
    "proposal_core": " (core: in every reply)",
    "proposal_scope": "🏷 scope {scope}",
    # -- compaction's one line (agent/turn/notes.py; docs/conversations.md, "Compaction")
    "compacted": (
        "📝 I wrote the earlier conversation into your summaries (“{heading}”{keywords}); "
        "from here on I keep only the last few turns."
    ),
    "compacted_keywords": "; new keywords: {words}",
    # -- the agent: replies, new conversations, forget and undo (agent/)
    "down": (
        "Sorry, I cannot reach the language model right now; your message is saved, "
        "please try again in a moment."
    ),
    "garbage": (
        "Sorry, the language model gave an answer I cannot use; your message is saved, please try "
        "again."
    ),
    "context_full": (
        "Sorry, this conversation no longer fits the language model's context even after "
        "shortening it; your message is saved, please send a shorter one or /new."
    ),
    "message_too_long": (
        "Sorry, your message is too long for this model's context: about {length} characters "
        "fit; your message is saved, please send a shorter one."
    ),
    "failed": "Sorry, something went wrong while handling this message; please try again.",
    "denied": "Sorry, you are not allowed to use this bot.",
    "tools_exhausted": (
        "Sorry, I could not put an answer together this time; please ask again differently."
    ),
    "new_session": "Started a fresh conversation.",
    "new_session_summarised": (
        "Started a fresh conversation; the old one is in your summaries (“{heading}”)."
    ),
    "forget_missing": "No memory {entry_id} of yours.",
    "forget_unreadable": (
        "{entry_id} was not forgotten: {names} cannot be read (not UTF-8); fix or restore it, "
        "then /forget again."
    ),
    "forgot": (
        "Forgot {entry_id}{also}; where your logs, summaries and this conversation held a copy of "
        "it they now say {marker}. /undo within {minutes} minutes brings all of it back."
    ),
    "forgot_also_one": " (and {n} earlier version)",
    "forgot_also_many": " (and {n} earlier versions)",
    "undo_nothing": (
        "Nothing to undo: /undo takes back your last act (a /remember, /edit, /forget, /pin, "
        "/remind...) only within {minutes} minutes."
    ),
    # Its text is not said again: taking back a /remember leaves no copy, this message included.
    "undo_saved": (
        "↩️ Undone: remembering {entry_id} — it is not remembered any more, and no copy of it is "
        "kept."
    ),
    "undo_revise": "↩️ Undone: {what} — it reads '{text}' again.",
    "undo_change": "↩️ Undone: {what} — it is as it was before.",
    "undo_not_last": (
        "That Undo is for an earlier act; only your last act can be undone now: {what}. "
        "Type /undo to take that back."
    ),
    "undo_changed": (
        "Your last act, {what}, cannot be undone: that memory has changed since. Nothing was "
        "changed."
    ),
    "undo_button": "↩️ Undo {what}",
    "act_remember": "remembering '{text}'",
    "act_forget": "forgetting '{text}'",
    "act_remind": "the reminder #{reminder_id}",
    "act_remind_text": "reminder #{reminder_id} '{text}'",
    "act_revise": "the edit of '{text}'",
    "act_pin": "pinning '{text}'",
    "act_unpin": "unpinning '{text}'",
    "act_scope": "the new scope of '{text}'",
    "act_keep": "keeping '{text}'",
    "act_restore": "restoring '{text}'",
    "act_confirm": "confirming '{text}'",
    "act_change": "the change to '{text}'",
    "act_snooze": "the snooze of reminder #{reminder_id}",
    "act_done": "marking reminder #{reminder_id} done",
    "act_cancel": "cancelling reminder #{reminder_id}",
    "act_set": "setting reminder #{reminder_id}",
    "act_tz": "the change of your time zone to {zone}",
    "act_new": "starting a new conversation (/new)",
    "act_discard": "discarding a proposal",
    "act_proposal_edit": "editing a proposal",
    "act_reminder_discard": "discarding reminder proposal #{reminder_id}",
    "act_forget_all": "deleting all your memories",
    "act_unchanged": "your /{command}",
    "undo_rings_again": "↩️ Undone: {what} — it rings at {when} again.",
    "undo_waits_again": "↩️ Undone: {what} — it waits for your answer again.",
    "undo_reminder_back": "↩️ Undone: {what} — the reminder is as it was before.",
    "undo_tz": "↩️ Undone: {what} — your time zone is {zone} again, and so are your reminders.",
    "undo_reminder_changed": (
        "Your last act, {what}, cannot be undone: that reminder has changed since. Nothing was "
        "changed."
    ),
    "undo_final": "Your last act, {what}, cannot be taken back; nothing was changed.",
    "undo_unchanged": (
        "Your last act, {what}, changed nothing, so there is nothing to take back; nothing was "
        "changed."
    ),
    "undo_reminder": "↩️ Undone: reminder #{reminder_id} ({text}) is cancelled.",
    "session_unreadable": (
        "Your previous conversation file could not be read, so a new conversation was started "
        "and the old file kept as {kept_as}."
    ),
    "undo_restored": (
        "↩️ Undone: {what} — {entry_id} is back, and its text in your logs, summaries and this "
        "conversation."
    ),
    # -- one language everywhere: lines that used to say both, or only English (issue 23)
    "summary_name": "conversation summary ({day})",
    "status_active": "active",
    "status_deprecated": "deprecated",
    "status_low_priority": "low priority",
    "status_archived": "archived",
    "stats_memories": "{total} ({active} active)",
    "job_ok": "ok",
    "job_failed": "FAILED",
    "chat_banner": "PCAI terminal chat as {user}. /help for commands, Ctrl-D to leave.",
    "quoted": "“{text}”",
    "menu_page": "Memory page",
    "chat_page": "Memory page: {url} (type /web for a login link)",
    "layer_fallback": "fallback",
    "layer_short_term": "short-term",
    "chat_bye": "Bye.",
    "reply_cut": "[stopped here: you pressed Ctrl-C]",
    "chat_cut_hint": "Ctrl-C again at the prompt leaves.",
    "chat_quit": "/quit — leave",
    "chat_buttons": "/pin <id> · /unpin <id> · /edit <id> <text> · /forget <id>",
    "chat_yes_no": "(type yes or no)",
    "needs_agent": "Starting a new conversation needs the chat agent.",
    "unavailable_confirm": "Confirming memories is not available in this build yet.",
    "unavailable_curation": "Changing memories from chat is not available in this build yet.",
    "unavailable_command": "That command is not available in this build yet.",
    # -- memory errors and notes: codes from memory/errors.py, said here (memory/)
    "conflict": "Similar memory exists ({shown}). Add as new, or replace it?",
    "conflict_buttons": (
        "➕ Add keeps both; 🔁 Replace puts this one in place of the old (or reply add or "
        "replace); 🗑 Discard drops it."
    ),
    "conflict_typed": (
        "Type add to keep both, or replace to put this one in place of the old; "
        "/discard {id} drops it."
    ),
    "refused_too_long": "Too long for one memory ({length} characters, at most {limit}).",
    "refused_noise": "Not saved: that reads as {what}, not something to remember.",
    "refused_secret": "Not saved: it looks like it contains {what}, and secrets are never stored.",
    "refused_duplicate": "I already remember that ({entry_id}).",
    "refused_forgotten": (
        "Not saved: [forgotten] marks where a forgotten memory was, so no memory may hold it."
    ),
    "refused_field": "Unknown memory field {field!r}.",
    "refused_value": "The memory field {field!r} has a value of the wrong kind.",
    "refused_class": "memory_class must be one of {allowed}.",
    "refused_enforcement": "enforcement_level must be soft or hard.",
    "refused_scope": "Scope must be global, project:<name> or lang:<name>.",
    "refused": "Not saved.",
    "list_sep": ", ",
    "secret_password": "a password",
    "secret_card_number": "a payment card number",
    "secret_api_key": "an API key or access token",
    "secret_private_key": "a private key",
    "secret_national_id": "a national ID number",
    "secret_card_security_code": "a card security code",
    "secret_pin_code": "a PIN or verification code",
    "secret_bank_account": "a bank account number",
    "proposal_error": "That proposal cannot be used.",
    "proposal_missing": (
        "No pending memory {proposal_id!r} of yours: it may have been answered already."
    ),
    "proposal_expired_at": (
        "That proposal expired at {expired_at:%H:%M}; ask me to remember it again."
    ),
    "proposal_expired": "That proposal has expired; ask me to remember it again.",
    "proposal_resolved": "That proposal was already {status}.",
    "not_the_users_act": "Only the user can answer a proposal (a button, a reply, /confirm).",
    "entry_missing": "No memory {entry_id!r} of yours.",
    "entry_archived": "{entry_id} is archived; /restore {entry_id} first.",
    "entry_replaced": "{entry_id} was replaced by {newer}; change that one.",
    "entry_superseded": "{entry_id} was replaced by the newer version; change that one.",
    "reminder_missing": "No reminder {reminder_id} of yours.",
    "invalid_user_key": "Not a valid user: {user_key!r}.",
    "file_corrupt": (
        "Your {topic} is not UTF-8 at byte {position} (line {line}): fix or remove that byte; "
        "until then I answer without what is in that file (nothing was changed)."
    ),
    "file_unreadable": (
        "I cannot read your {topic} ({reason}); fix its permissions or restore it, until then I "
        "answer without it (nothing was changed)."
    ),
    "memory_error": "Sorry, something went wrong with the memory store.",
    "storage_unavailable": (
        "SQLite on this machine cannot load sqlite-vec: install the project (pip install -e .)."
    ),
    "embedder_unavailable": (
        "Vectors cannot be computed right now (the model or Ollama is unavailable)."
    ),
    "data_dir_busy": "another PCAI service{who} is already running on {path}; stop it first",
    "state_damaged": "The state database pcai.db is damaged.",
    "state_too_new": (
        "{path} was written by a newer version of PCAI (it has schema migration {names}, which "
        "this version does not know): run that version or a newer one; the file was not changed."
    ),
    "state_schema": (
        "{path}: table {table} lacks a column this version needs, so it cannot be adopted; the "
        "file was not changed."
    ),
    # -- history errors: codes from history/errors.py
    "history_error": "Sorry, something went wrong with the conversation history.",
    "session_invalid": "That conversation file cannot be used.",
    # -- reminder errors: codes from agent/reminders/errors.py
    "reminder_no_time": "I could not find a time in that. Try: /remind tomorrow 9am call mom",
    "reminder_no_text": "What should I remind you of? Put it after the time.",
    "reminder_bad_date": "{what} is not a date on the calendar.",
    "reminder_bad_time": "{what} is not a time of day.",
    "reminder_past": "{what} has already passed.",
    "reminder_conflict": "That names two different times; give one.",
    "reminder_bad_number": "{what} is not a number I can read.",
    "reminder_too_far": "That is too far ahead: a reminder can be at most 100 years away.",
    "reminder_too_long": "That reminder is too long (at most 500 characters).",
    "reminder_not_found": "No reminder {reminder_id} of yours.",
    "reminder_answered": "That reminder is already {status}.",
    "reminder_already_answered": "That reminder was already answered.",
    "reminder_expired": "That proposal has expired; ask again.",
    "reminder_passed_waiting": "That time passed while the proposal waited; ask again.",
    "reminder_not_cancellable": "That reminder is {status} and cannot be cancelled.",
    "reminder_not_snoozable": "That reminder is {status} and cannot be snoozed.",
    "reminder_finished": "That reminder is {status}.",
    "reminder_bad_briefing": "{said!r} is not a time: try /briefing 07:30 or /briefing off.",
    "reminder_unknown_zone": (
        "{name!r} is not a time zone I know; try Asia/Taipei or Europe/Berlin."
    ),
    "reminder_text_length": "A reminder needs a text of 1-500 characters.",
    "reminder_time_passed": "That time has already passed.",
    "reminder_not_iso": "{when!r} is not an ISO date and time.",
    "reminder_bad_repeat": "Repeat must be daily, weekly, monthly or yearly.",
    # -- the reminder desk (agent/reminders/desk.py)
    "reminder_unknown_command": "Unknown command.",
    "reminder_tz_now": "Your time zone: {zone}. Change it: /tz Europe/Berlin",
    "reminder_briefing_unavailable": "The briefing is not available.",
    "reminder_briefing_daily": "daily at {at}",
    "reminder_briefing_off": "off",
    "reminder_briefing_status": (
        "Morning briefing: {now}. Set: /briefing 07:30, stop: /briefing off, "
        "see it now: /briefing now"
    ),
    "reminder_briefing_turned_off": "☀️ Morning briefing turned off.",
    "reminder_briefing_set": "☀️ You will get a morning briefing daily at {at} (your time zone).",
    "reminder_proposal": "⏰ Set this reminder?\n\n{understood_en}\n\n#{rid}",
    "reminder_proposal_hint": "press ✅, or reply yes",
    "reminder_button_confirm": "✅ Confirm",
    "reminder_button_discard": "🗑 Discard",
    "reminder_button_done": "✅ Done",
    "reminder_button_snooze": "💤 {span_en}",
    "reminder_button_hour": "💤 1 h",
    "reminder_button_tomorrow": "💤 tomorrow",
    "reminder_none": "No reminders. Add one: /remind tomorrow 9am call mom",
    "reminder_list_head": "Your reminders:",
    "reminder_button_cancel": "✖ Cancel #{rid}",
    "reminder_button_stale": "That button no longer works.",
    "reminder_set_toast": "Set",
    "reminder_set": "✅ Set. {understood_en}",
    "reminder_dropped": "🗑 Reminder dropped: {text}",
    "reminder_cancelled": "Cancelled #{rid}: {text}",
    "reminder_done": "✅ Done: {text}",
    "reminder_snoozed": "💤 {text}\nsnoozed until {when_en}",
    "reminder_snoozed_toast": "Snoozed",
    "reminder_which": (
        "Several reminders are waiting; which one do you mean? Reply to it, or use its buttons."
    ),
    "reminder_not_wanted": "OK, no reminder.",
    "reminder_memory_gone": "That memory is gone.",
    "reminder_already_set": "That reminder is already set.",
    "reminder_no_date": "That memory names no date.",
    "reminder_offer": "🎂 {question_en}",
    "reminder_offer_button": "🔔 Yes, remind me",
    # -- reminders elsewhere (agent/reminders/texts.py, bot/telegram/reminders.py)
    "reminder_unavailable": "Reminders are not available here.",
    "reminder_alert": "⏰ Reminder: {text}",
    "reminder_alert_late": "⏰ Reminder (late, was due {when_en}): {text}",
    # -- a reminder's time and its /reminders line (agent/reminders/texts.py)
    "reminder_when": "{when_en}",
    "reminder_understood": "{understood_en}",
    "reminder_list_repeat": " ↻ {rule_en}",
    "reminder_mark_proposed": " (awaiting your confirmation)",
    "reminder_mark_unknown": " (may not have arrived: the bot stopped mid-send)",
    "reminder_mark_firing": " (sending)",
    # -- the morning briefing as a plain list (agent/reminders/briefing.py)
    "briefing_title": "Good morning! Your briefing for {day}",
    "briefing_reminders": "Today's reminders",
    "briefing_todos": "Open todos",
    "briefing_short_term": "Latest notes",
    "briefing_fading": "Memories that are fading",
    "briefing_nothing": "Nothing to report today.",
    # -- the /tz reply: what a change of zone did to each reminder (agent/reminders/zones.py)
    "tz_set": "🌐 Time zone set to {zone}.",
    "tz_quoted": "“{text}”",
    "tz_clock": " Your {n} reminder(s) keep their clock times, now in {name} (09:00 stays 09:00).",
    "tz_kept_one": "{said} at {when}",
    "tz_kept_more": " (and {rest} more)",
    "tz_kept": " {n} keep their moment (set “in …”, or already due): {named}{more}.",
    "tz_now": " {said} was set for {was}, which has already passed in {name}: it rings now.",
    "tz_next": (
        " {said} ({rule_en}): {was} has already passed in {name}; it rings next on {next}."
    ),
    "tz_rest_now": " {rest} more: they ring now.",
    "tz_rest_next": " {rest} more recurring reminder(s) ring at their next occurrence.",
    # -- what the agent adds when a reply says more than was saved (agent/remember.py)
    "remember_pending": "(Not saved yet: it is kept only once you confirm it.)",
    "remember_nothing": "(Correction: nothing was saved this time.)",
    "remember_refused": "(No memory was proposed: {reason})",
    # -- the command menu and /help, one line per command (bot/frontdesk/texts.py)
    "command_start": "start",
    "command_help": "help",
    "command_memory": "list memories (/memory 2 for page 2)",
    "command_search": "search memories: /search coffee",
    "command_remember": "remember something (saved at once; /undo)",
    "command_forget": "forget a memory: /forget <id>",
    "command_undo": "take back your last act (/remember, /edit, /forget, /pin, /remind...), named",
    "command_pin": "pin a memory (in every reply): /pin <id>",
    "command_unpin": "unpin a memory: /unpin <id>",
    "command_edit": "edit a memory: /edit <id> <new text>",
    "command_scope": "set a scope: /scope <id> project:x | lang:y | global",
    "command_archived": "archived memories",
    "command_restore": "bring an archived memory back: /restore <id>",
    "command_keep": "keep a fading memory: /keep <id>",
    "command_pending": "memories waiting for confirmation",
    "command_confirm": "confirm a pending memory: /confirm [id]",
    "command_discard": "discard a pending memory: /discard [id]",
    "command_why": "which memories shaped the last reply",
    "command_history": "how a topic's memory changed",
    "command_new": "start a fresh conversation",
    "command_export": "export your memories (Markdown)",
    "command_stats": "stats: counts, index size, jobs",
    "command_remind": "set a reminder: /remind 5pm water plants",
    "command_reminders": "list your reminders (and cancel one)",
    "command_tz": "set your time zone: /tz Asia/Taipei",
    "command_briefing": "morning briefing: /briefing 07:30 or off",
    "command_web": "a one-time login link to your memory page",
    "command_lang": "set your language: /lang en or /lang zh",
    # -- /stats row labels (the backend names rows in English; bot/jobs.py names the jobs)
    "stats_row_memories": "memories",
    "stats_row_pending": "pending",
    "stats_row_pending_reminders": "pending reminders",
    "stats_reminders_waiting": "{set} (+{waiting} waiting for your yes)",
    "stats_row_daily_logs": "daily logs",
    "stats_row_indexed_chunks": "indexed chunks",
    "stats_row_older_versions": "older versions",
    "stats_row_idle_summaries": "idle_summaries",
    "stats_row_index": "index",
    "stats_row_pending_expiry": "pending_expiry",
    "stats_row_forget_undo": "forget_undo",
    "stats_row_lifecycle": "lifecycle",
    "stats_row_fading": "fading",
    "stats_row_turns": "turns",
}

# The memory page's words (bot/web/i18n.py): its own keys, used raw (no fields filled here).
PAGE: dict[str, str] = {
    "title": "PCAI memory",
    "memories": "Memories",
    "pending": "Pending",
    "why": "Why",
    "logs": "Logs",
    "transfer": "Export",
    "logout": "Log out",
    "search": "Search",
    "search_hint": "Search memories (e.g. coffee)",
    "explain": "Explain scores",
    "filter": "Filter",
    "any": "any",
    "status": "status",
    "layer": "layer",
    "section": "section",
    "scope": "scope",
    "topic": "topic",
    "weight": "weight",
    "core": "core (pinned)",
    "created": "created",
    "last_used": "last used",
    "uses": "uses",
    "health": "health",
    "fades_on": "fades at today's rate on",
    "never": "never",
    "yes": "yes",
    "not_yet": "not yet",
    "edit": "Edit",
    "save": "Save",
    "pin": "Pin",
    "unpin": "Unpin",
    "forget": "Delete",
    "more": "Details",
    "all_fields": "All fields and versions",
    "new_section": "or a new section",
    "forget_all_link": "Delete all memories…",
    "forget_all_head": "Delete all memories",
    "forget_all_final": (
        "This deletes all {n} of your memories, and every copy of them in your logs, "
        "summaries, conversations and the search index. It is final: Undo cannot bring them "
        "back."
    ),
    "forget_all_export": "Keep a copy first",
    "forget_all_button": "Delete all {n} memories",
    "forgot_all": "Deleted {n} memories and every copy of them. This cannot be undone.",
    "cancel": "Cancel",
    "reminders": "Reminders",
    "no_reminders": "No reminders. Set one in the chat: /remind tomorrow 9am call mom",
    "reminders_rang": "Rang this week",
    "reminders_coming": "Coming up",
    "reminder_done": "Done",
    "snooze_short": "Snooze {en}",
    "snooze_hour": "In an hour",
    "snooze_tomorrow": "Tomorrow",
    "reminder_waiting": "waiting for your confirmation",
    "reminder_when": "{en} ({zone})",
    "reminder_repeat": "repeats {en}",
    "undo": "Undo",
    "restore": "Restore",
    "timeline": "Timeline",
    "text": "text",
    "no_memories": "No memories yet.",
    "no_results": "Nothing found.",
    "results": "Results",
    "dropped": "Dropped candidates",
    "stage": "stage",
    "score": "score",
    "source": "source",
    "page": "page",
    "next": "next",
    "prev": "previous",
    "confirm": "Confirm",
    "replace": "Replace the old one",
    "add_new": "Add as new (keep the old one)",
    "discard": "Discard",
    "confirm_selected": "Confirm selected",
    "discard_selected": "Discard selected",
    "no_pending": "Nothing is waiting for confirmation.",
    "time_left": "time left",
    "minutes": "min",
    "why_head": "The memories that shaped each recent reply, and when each is used:",
    "no_why": "No memories shaped your recent replies.",
    "days": "Daily logs",
    "summaries": "Summaries",
    "no_logs": "No logs yet.",
    "search_logs": "Search logs and summaries",
    "export_md": "Export Markdown",
    "export_json": "Export JSON",
    "import": "Import",
    "import_hint": (
        "Import a Markdown or JSON file: each memory becomes a proposal you confirm in a batch."
    ),
    "signin_head": "Log in to your memory page",
    "signin_how": (
        "Send /web to the bot in Telegram (or run pcai web-link --user KEY in a terminal) "
        "and open the one-time link it gives you (valid for 10 minutes)."
    ),
    "continue": "Continue",
    "link_used": "This login link was already used; send /web again.",
    "link_expired": "This login link expired; send /web again.",
    "link_unknown": "That is not a valid login link.",
    "too_many": "Too many attempts; try again in a few minutes.",
    "opening": "Logging in from Telegram…",
    "not_found": "No such page or memory.",
    "forbidden": "Refused (reload the page and try again).",
    "restored": "Restored.",
    "kept": "Kept: its recency starts again.",
    "keep": "Keep",
    "saved": "Saved.",
    "new_version": "Saved as a new version: ",
    "pinned": "Pinned.",
    "unpinned": "Unpinned.",
    "confirmed": "Remembered: ",
    "rejected": "Discarded: ",
    "expired": "This proposal expired; nothing was saved.",
    "missing": "That proposal is gone (already handled?).",
    "edited": "Edited; please confirm it.",
    "imported": "%d proposals to confirm; %d not imported.",
    "add_conflict": "Close to a memory you have: choose Add or Replace under Pending.",
    "said_user": "You:",
    "said_assistant": "PCAI:",
    "add_head": "Add a memory",
    "add": "Add",
    "add_section_hint": "section (optional)",
    "import_skipped": "no text to remember: skipped",
    "import_empty": "The file holds no memories to import.",
    "import_bad": "Cannot read that file: use a Markdown or JSON export of PCAI.",
    "import_bad_record": "Record {n} has a bad {field}: nothing in the file was imported.",
    "import_repeated": "repeated in the file: proposed once",
    "import_failed": (
        "Importing stopped on an error on our side: nothing in the file was imported."
    ),
    "import_stopped": (
        "Importing stopped on an error on our side after {made} proposals: those wait under "
        "Pending, the rest was not imported."
    ),
    "add_failed": "Adding that stopped on an error on our side: check your list, then try again.",
    "language": "中文",
    "kind_memory": "memory",
    "kind_log": "log",
    "kind_summary": "summary",
    "not_live": "{id} is {status}: edit the version that replaced it, or restore it.",
    "no_text": "A memory needs some text.",
    "bad_scope": "Scope must be global, project:<name> or lang:<name>.",
    "bad_weight": "Weight is a whole number from 0 to 10.",
    "as_is": "{text}",
    "too_large": "The file is too large (2 MB at most).",
    "too_many_entries": "At most 500 memories at a time.",
    "chain_empty": "This memory has no other versions.",
    "status_active": "active",
    "status_low_priority": "low priority",
    "status_archived": "archived",
    "status_deprecated": "replaced",
    "details": "Technical details",
    "in_replies": "in replies",
    "layer_L0": "always in mind",
    "layer_L1": "when its scope comes up",
    "layer_L2": "when the topic comes up",
    "layer_short_term": "recent notes",
    "layer_fallback": "an overview of your memories",
    "scope_global": "everywhere",
    "id": "id",
    "health_explained": "health (0–1, from uses, recency and weight; low means fading)",
    "from_chat": "from the chat",
    "from_import": "from an imported file",
    "from_page": "added on this page",
    "from_command": "from a command",
    "from_operator": "from the terminal",
    "from_other": "another source",
    "src_memory": "your memories",
    "src_log": "your log of {day}",
    "src_summary": "a conversation summary",
    "src_short_term": "recent notes",
    "who_user": "you",
    "who_assistant": "PCAI",
    "who_summary": "summary",
    "file_memory_full": "Conversation summaries",
    "file_auto_summaries": "Summaries after a pause",
}
