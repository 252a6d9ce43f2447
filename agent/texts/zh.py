"""Every sentence PCAI says, in Chinese (Traditional); ``{field}`` marks a placeholder."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    # -- the bot: commands, buttons, confirmations (bot/)
    "welcome": (
        "你好！我是 PCAI，會記得你確認過的事。直接跟我聊天，或輸入 /help 看指令。"
        "（English: /lang en）"
    ),
    "stranger": "抱歉，這個機器人只服務它的主人。",
    "text_only": "目前只看得懂文字訊息。",
    "error": "抱歉，我這邊出了點問題，請再試一次。",
    # -- turns the bot could not answer at once (bot/telegram/queues.py, errors.py)
    "flood_skipped": (
        "你一次傳了很多訊息：文字我會一起回答，其間的其他訊息和指令沒有處理，"
        "請等我回答後再傳一次。"
    ),
    "press_skipped": "一次太多了：等我回覆後再按一次。",
    "turn_lost": "我在回答你 {time} 的訊息（「{text}」）之前停止了，請再傳一次。",
    "disk_full": (
        "我無法儲存你的訊息：我所在機器的磁碟已滿，什麼都沒有存下；"
        "訊息仍在聊天中，騰出空間後請再傳一次。"
    ),
    "group_private": "記憶只在私訊中使用，請私訊我。",
    "no_memories": "還沒有記憶。用 /remember <內容> 新增。",
    "usage_search": "用法：/search <關鍵字>",
    "usage_remember": "用法：/remember <內容>",
    "usage_remind": "用法：/remind <時間> <內容>，例如 /remind 明天早上九點 打電話給媽媽",
    "not_a_reminder_id": "「{what}」不是提醒的編號：/reminders 會列出每個提醒和它的編號。",
    "usage_forget": "用法：/forget <id>（id 見 /memory）",
    "usage_history": "用法：/history <主題>",
    "nothing_found": "找不到相關記憶。",
    "no_pending": "沒有等待確認的記憶。",
    "which_pending": (
        "有好幾條記憶等待確認，你指的是哪一條？請按該條下面的按鈕、回覆它，或輸入 /confirm <id>。"
    ),
    "which_pending_typed": (
        "有好幾條記憶等待確認，你指的是哪一條？請輸入 /confirm <id> 或 /discard <id>。"
    ),
    "this_pending_typed": "你是指這條等待確認的記憶嗎？請輸入 /confirm <id> 或 /discard <id>。",
    "this_pending": "你是指這條等待確認的記憶嗎？請按它下面的按鈕，或回覆它。",
    "no_why": "上一個回答沒有用到任何記憶。",
    "why_head": "上一個回答用到的記憶：",
    "confirmed": "✅ 已記住：",
    "remembered_now": "✅ 已記住：{text} ({entry_id})。記錯了？{minutes} 分鐘內用 /undo 取消。",
    "reminder_set_now": "{said}（{minutes} 分鐘內可用 /undo 取消）",
    "button_undo": "↩️ 復原",
    "rejected": "🗑 已捨棄：",
    "expired": "⌛ 這個提議已過期，沒有寫入。",
    "button_stale": "這個按鈕已失效。",
    "missing": "找不到這個提議（可能已處理過）。",
    "edit_prompt": "✏️ 請回覆這則訊息，輸入新的內容。",
    "edited": "已修改，請再確認一次：",
    "propose_head": "📝 要記住這條嗎？",
    "expires": "{time} 前有效",
    "web_link": "你的記憶頁（這個連結只能用一次，10 分鐘內有效）：\n{url}",
    "web_off": "記憶頁沒有在執行（見 PCAI_WEB_ENABLED 與 PCAI_WEB_PORT）。",
    "web_local": (
        "這個位址只在執行 PCAI 的電腦上能開；要用手機開，請設定 PCAI_WEB_HOST 與 "
        "PCAI_WEB_PUBLIC_URL（見 README）。"
    ),
    "export_caption": "你的記憶（Markdown）",
    "stats_head": "統計",
    "no_such_page": "沒有第 {page} 頁：你的記憶共 {pages} 頁（/memory {pages}）。",
    "usage_memory": "用法：/memory [頁數]，例如 /memory 2",
    "page": "第 {page}/{pages} 頁，下一頁：/memory {next}",
    "needs_ollama": (
        "聊天需要 {url} 的 Ollama，但它沒有回應：請執行 `ollama serve` 與 "
        "`ollama pull {model}`。記憶指令仍可使用（/help）。"
    ),
    "needs_server": (
        "聊天需要 {url} 的模型伺服器（`PCAI_LLM_BACKEND=openai`），但它沒有回應："
        "請啟動它（`llama-server`、`vllm serve` 或 `lms server start`）並載入模型 {model}，"
        "或設定 PCAI_LLM_BASE_URL。記憶指令仍可使用（/help）。"
    ),
    "model_still_down": "無法回答：{url} 的模型伺服器仍然沒有回應。",
    "help_head": "PCAI — 指令",
    "lang_set": "好的，之後我都用中文跟你說話（/lang en 改用英文）。",
    "lang_now": "我用中文跟你說話。/lang en 改用英文，/lang zh 改回中文。",
    "unknown_command": "沒有 /{name} 這個指令。輸入 /help 看所有指令。",
    "help_footer": "直接輸入文字就是聊天；我提議記住的事要你確認才會寫入。",
    "button_confirm": "✅ 確認",
    "button_edit": "✏️ 修改",
    "button_discard": "🗑 捨棄",
    "chat_how_to_answer": "回覆「確認」或 /confirm {id}；/discard {id} 捨棄",
    "stats_topic": "當前主題",
    "stats_prune": "少用的區塊",
    "stats_prune_advice": "連續多輪沒用到，可考慮合併或移除",
    "no_history_topic": "沒有關於「{topic}」的記憶。",
    "proposal_expiry_notice": "⌛ 待確認的記憶已過期，沒有寫入：「{short}」",
    "lost_proposals": (
        "⚠️ 我的狀態資料庫損壞，已另存並重建；你等待確認的記憶 {shown}{more} 遺失了，"
        "沒有寫入，請再要求我記住一次。"
    ),
    # -- governance from chat: pin, scope, edit, archived/restore, keep (bot/, issue 13)
    "usage_pin": "用法：/pin <id>（id 見 /memory）",
    "usage_unpin": "用法：/unpin <id>（id 見 /memory）",
    "usage_edit": "用法：/edit <id> <新內容>",
    "usage_scope": "用法：/scope <id> project:名稱 | lang:語言 | global",
    "usage_restore": "用法：/restore <id>（id 見 /archived）",
    "usage_keep": "用法：/keep <id>",
    "pinned": "📌 已釘選，之後每次回答都會帶入：",
    "unpinned": "📍 已取消釘選：",
    "scoped": "🏷 範圍改為 {scope}：",
    "revised": "✏️ 已修改（{new} 取代 {old}）：",
    "kept": "✅ 會繼續記得：",
    "restored": "♻️ 已找回：",
    "no_archived": "沒有封存的記憶。",
    "archived_head": "已封存的記憶（/restore <id> 找回）：",
    "memory_legend": "📌 釘選 · 📍 取消釘選 · ✏️ 修改 · 🗑 忘記（/undo 可復原）",
    "revise_prompt": "✏️ 請回覆這則訊息，輸入 {entry_id} 的新內容。",
    "replaced": "（取代 {ids}）",
    "button_add": "➕ 新增",
    "button_replace": "🔁 取代",
    "keep_word": "保留",
    "fading_head": (
        "🍂 這些記憶很久沒用到，一週後會封存（不再被搜尋到，可用 /restore 找回）。要保留嗎？"
    ),
    "proposal_weight": "⭐ 重要程度 {weight}/10",
    "proposal_core": "（核心：每次回答都會帶入）",
    "proposal_scope": "🏷 範圍 {scope}",
    # -- compaction's one line (agent/turn/notes.py; docs/conversations.md, "Compaction")
    "compacted": (
        "📝 前面的討論重點已寫入你的摘要（「{heading}」{keywords}），之後只帶最近幾輪。"
    ),
    "compacted_keywords": "；新關鍵字：{words}",
    # -- the agent: replies, new conversations, forget and undo (agent/)
    "down": "抱歉，我現在連不上語言模型，你的訊息已經記下了，請稍後再試一次。",
    "garbage": "抱歉，語言模型這次的回應無法使用，你的訊息已經記下了，請再試一次。",
    "context_full": (
        "抱歉，這段對話縮短後仍超出語言模型能讀的長度，你的訊息已經記下了，"
        "請傳短一點的訊息或用 /new。"
    ),
    "message_too_long": (
        "抱歉，你的訊息太長，超出這個模型能讀的長度：大約 {length} 個字以內才放得下；"
        "你的訊息已經記下了，請傳短一點的。"
    ),
    "failed": "抱歉，處理這則訊息時出了問題，請再試一次。",
    "denied": "抱歉，你沒有使用這個機器人的權限。",
    "tools_exhausted": "抱歉，我這次沒能整理出答案，請換個說法再問一次。",
    "new_session": "已開始新的對話。",
    "new_session_summarised": "已開始新的對話；舊對話已寫入你的摘要（「{heading}」）。",
    "forget_missing": "找不到你的記憶 {entry_id}。",
    "forget_unreadable": (
        "沒有忘記 {entry_id}：{names} 無法讀取（不是 UTF-8），請修正或還原後再 /forget 一次。"
    ),
    "forgot": (
        "已忘記 {entry_id}{also}，日誌、摘要與對話中它的副本已改為 {marker}；"
        "{minutes} 分鐘內可用 /undo 全部復原。"
    ),
    "forgot_also_one": "（連同 {n} 個較早的版本）",
    "forgot_also_many": "（連同 {n} 個較早的版本）",
    "undo_nothing": (
        "沒有可復原的動作：/undo 只能在 {minutes} 分鐘內復原你的上一個動作"
        "（/remember、/edit、/forget、/pin、/remind……）。"
    ),
    "undo_saved": "↩️ 已復原：記住 {entry_id} — 不再記住，也沒有留下任何副本。",
    "undo_revise": "↩️ 已復原：{what} — 內容又是「{text}」了。",
    "undo_change": "↩️ 已復原：{what} — 已回到之前的樣子。",
    "undo_not_last": (
        "這個復原按鈕屬於較早的動作；現在只能復原你的上一個動作：{what}。請輸入 /undo。"
    ),
    "undo_changed": "你的上一個動作（{what}）無法復原：那則記憶之後又改過了。沒有做任何變更。",
    "undo_button": "↩️ 復原{what}",
    "act_remember": "記住「{text}」",
    "act_forget": "忘記「{text}」",
    "act_remind": "提醒 #{reminder_id}",
    "act_revise": "對「{text}」的修改",
    "act_pin": "釘選「{text}」",
    "act_unpin": "取消釘選「{text}」",
    "act_scope": "「{text}」的新範圍",
    "act_keep": "保留「{text}」",
    "act_restore": "恢復「{text}」",
    "act_confirm": "確認「{text}」",
    "act_change": "對「{text}」的變更",
    "act_snooze": "延後提醒 #{reminder_id}",
    "act_done": "把提醒 #{reminder_id} 標為完成",
    "act_cancel": "取消提醒 #{reminder_id}",
    "act_set": "設定提醒 #{reminder_id}",
    "act_tz": "把時區改成 {zone}",
    "act_new": "開始新的對話（/new）",
    "act_discard": "捨棄一個提議",
    "act_proposal_edit": "修改一個提議",
    "act_reminder_discard": "捨棄提醒提議 #{reminder_id}",
    "act_unchanged": "你的 /{command}",
    "undo_rings_again": "↩️ 已復原：{what} — 它又會在 {when} 響。",
    "undo_waits_again": "↩️ 已復原：{what} — 它又在等你確認了。",
    "undo_reminder_back": "↩️ 已復原：{what} — 提醒已回到之前的樣子。",
    "undo_tz": "↩️ 已復原：{what} — 你的時區又是 {zone}，提醒也回到原本的時間。",
    "undo_reminder_changed": (
        "你的上一個動作（{what}）無法復原：那個提醒之後又變了。沒有做任何變更。"
    ),
    "undo_final": "你的上一個動作（{what}）無法復原；沒有做任何變更。",
    "undo_unchanged": (
        "你的上一個動作（{what}）沒有改變任何東西，所以沒有可復原的；沒有做任何變更。"
    ),
    "undo_reminder": "↩️ 已復原：提醒 #{reminder_id}（{text}）已取消。",
    "session_unreadable": "之前的對話檔無法讀取，已開始新的對話，舊檔另存為 {kept_as}。",
    "undo_restored": "↩️ 已復原：{what} — {entry_id} 回來了，日誌、摘要與對話中它的原文也是。",
    # -- one language everywhere: lines that used to say both, or only English (issue 23)
    "summary_name": "對話摘要 ({day})",
    "status_active": "使用中",
    "status_deprecated": "已被取代",
    "status_low_priority": "低優先",
    "status_archived": "已封存",
    "stats_memories": "{total}（{active} 條使用中）",
    "job_ok": "正常",
    "job_failed": "失敗",
    "chat_banner": "PCAI 終端機聊天（{user}）。輸入 /help 看指令，Ctrl-D 離開。",
    "quoted": "「{text}」",
    "menu_page": "記憶頁",
    "chat_page": "記憶頁：{url}（輸入 /web 取得登入連結）",
    "layer_fallback": "備用",
    "layer_short_term": "短期",
    "chat_bye": "再見。",
    "chat_quit": "/quit — 離開",
    "chat_buttons": "/pin <id> · /unpin <id> · /edit <id> <新內容> · /forget <id>",
    "chat_yes_no": "（回覆「好」確認，「不要」略過）",
    "needs_agent": "開始新對話需要聊天代理。",
    "unavailable_confirm": "這個版本還不能確認記憶。",
    "unavailable_curation": "這個版本還不能在聊天中修改記憶。",
    "unavailable_command": "這個版本還沒有這個指令。",
    # -- memory errors and notes: codes from memory/errors.py, said here (memory/)
    "conflict": "已有相近的記憶（{shown}）。要新增，還是取代？",
    "refused_too_long": "太長了，一條記憶最多 {limit} 字。",
    "refused_noise": "不會記住：這看起來是閒聊或太短的內容，不是需要記住的資訊。",
    "refused_secret": "不會記住：內容似乎含有{what}，敏感資料一律不儲存。",
    "refused_duplicate": "這條已經記住了（{entry_id}）。",
    "refused_field": "不認得的記憶欄位 {field!r}。",
    "refused_value": "記憶欄位 {field!r} 的值不對。",
    "refused_class": "memory_class 不正確。",
    "refused_enforcement": "enforcement_level 不正確。",
    "refused_scope": "範圍必須是 global、project:<名稱> 或 lang:<名稱>。",
    "refused": "不會記住這條。",
    "list_sep": "、",
    "secret_password": "密碼",
    "secret_card_number": "信用卡號",
    "secret_api_key": "API 金鑰或存取權杖",
    "secret_private_key": "私鑰",
    "secret_national_id": "身分證字號",
    "secret_card_security_code": "信用卡安全碼",
    "secret_pin_code": "PIN 碼或驗證碼",
    "secret_bank_account": "銀行帳號",
    "proposal_error": "這個提議無法使用。",
    "proposal_missing": "找不到這個待確認的記憶（可能已經處理過了）。",
    "proposal_expired_at": "這個待確認的記憶已過期，請重新要求記住。",
    "proposal_expired": "這個待確認的記憶已過期，請重新要求記住。",
    "proposal_resolved": "這個提議已經處理過了。",
    "not_the_users_act": "只有使用者本人能確認或捨棄提議。",
    "entry_missing": "找不到這條記憶。",
    "entry_archived": "這條已封存，請先 /restore {entry_id}。",
    "entry_replaced": "這條已被 {newer} 取代。",
    "entry_superseded": "這條已被新版本取代。",
    "reminder_missing": "找不到這個提醒。",
    "invalid_user_key": "這不是有效的使用者。",
    "file_corrupt": (
        "⚠️ 你的 {topic} 第 {line} 行（第 {position} 個位元組）不是 UTF-8 編碼，"
        "在修好之前我不會用到這個檔案裡的記憶；請修正或刪除那個位元組（檔案沒有被改動）。"
    ),
    "file_unreadable": "⚠️ 我讀不到你的 {topic}（{reason}），在修好之前我不會用到它。",
    "memory_error": "抱歉，記憶存取出了問題。",
    "storage_unavailable": (
        "這台機器的 SQLite 無法載入 sqlite-vec：請安裝專案（pip install -e .）。"
    ),
    "embedder_unavailable": "目前無法計算向量（模型或 Ollama 無法使用）。",
    "data_dir_busy": "已有另一個 PCAI 服務在使用這個資料夾，請先停止它",
    "state_damaged": "狀態資料庫 pcai.db 損壞了。",
    "state_too_new": (
        "{path} 是較新版本的 PCAI 寫的（含有此版本不認得的結構變更 {names}）："
        "請執行那個版本或更新的版本；檔案沒有被改動。"
    ),
    "state_schema": "{path} 的資料表 {table} 缺少欄位，無法沿用；檔案沒有被改動。",
    # -- history errors: codes from history/errors.py
    "history_error": "抱歉，對話紀錄出了問題。",
    "session_invalid": "這個對話檔無法使用。",
}
