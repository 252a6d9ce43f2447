"""The /remind parser on a table of Chinese and English phrasings, with a fixed "now" and zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from agent.reminders.errors import ParseError
from agent.reminders.parse import parse_reminder

TPE = ZoneInfo("Asia/Taipei")
NY = ZoneInfo("America/New_York")
NOW = datetime(2026, 3, 4, 10, 0, tzinfo=TPE)  # a Wednesday, 10:00 in Taipei

# (phrase, due as "YYYY-MM-DD HH:MM" in Taipei, reminder text, encoded recurrence or None)
CASES = [
    # the three examples
    ("提醒我明天早上九點打電話給媽媽", "2026-03-05 09:00", "打電話給媽媽", None),
    ("remind me at 5pm to water the plants", "2026-03-04 17:00", "water the plants", None),
    ("每週一早上八點提醒我交週報", "2026-03-09 08:00", "交週報", "weekly 0 08:00"),
    # Chinese days, periods and clock forms
    ("後天下午三點半 看牙醫", "2026-03-06 15:30", "看牙醫", None),
    ("大後天晚上8點 繳費", "2026-03-07 20:00", "繳費", None),
    ("今天晚上九點15分 吃藥", "2026-03-04 21:15", "吃藥", None),
    ("今晚八點 倒垃圾", "2026-03-04 20:00", "倒垃圾", None),
    ("下週一十點一刻 開會", "2026-03-09 10:15", "開會", None),
    ("下周三下午3点 复诊", "2026-03-11 15:00", "复诊", None),
    ("週五 下午兩點 交報告", "2026-03-06 14:00", "交報告", None),
    ("星期天早上 去爬山", "2026-03-08 09:00", "去爬山", None),
    ("禮拜三晚上七點 練團", "2026-03-04 19:00", "練團", None),  # today is Wednesday
    ("凌晨兩點 看球賽", "2026-03-05 02:00", "看球賽", None),  # 02:00 today is past
    ("中午12點 吃飯", "2026-03-04 12:00", "吃飯", None),
    ("晚上12點 睡覺", "2026-03-05 00:00", "睡覺", None),
    ("十點十分 打卡", "2026-03-04 10:10", "打卡", None),
    ("兩點鐘 午休", "2026-03-04 14:00", "午休", None),  # 02:00 gone, 14:00 next
    ("九點 開會", "2026-03-04 21:00", "開會", None),  # 09:00 gone, 21:00 next
    ("7點 起床", "2026-03-04 19:00", "起床", None),
    ("下午3:45 接小孩", "2026-03-04 15:45", "接小孩", None),
    ("明早八點 晨會", "2026-03-05 08:00", "晨會", None),
    ("明晚 吃大餐", "2026-03-05 20:00", "吃大餐", None),
    ("明天 交作業", "2026-03-05 09:00", "交作業", None),
    ("明天早上9点提醒我开会", "2026-03-05 09:00", "开会", None),
    ("请提醒我后天取件", "2026-03-06 09:00", "取件", None),
    ("請提醒我明天要帶傘", "2026-03-05 09:00", "帶傘", None),
    # relative
    ("30分鐘後 關火", "2026-03-04 10:30", "關火", None),
    ("2小時後 拿衣服", "2026-03-04 12:00", "拿衣服", None),
    ("一個半小時後 出門", "2026-03-04 11:30", "出門", None),
    ("過10分鐘提醒我喝水", "2026-03-04 10:10", "喝水", None),
    ("3天後 回覆信件", "2026-03-07 10:00", "回覆信件", None),
    # dates
    ("5/3 14:00 看牙醫", "2026-05-03 14:00", "看牙醫", None),
    ("2026年12月25日 聖誕節", "2026-12-25 09:00", "聖誕節", None),
    ("15號 繳卡費", "2026-03-15 09:00", "繳卡費", None),
    ("3號 繳卡費", "2026-04-03 09:00", "繳卡費", None),  # the 3rd of March is past
    ("1月2日 續約", "2027-01-02 09:00", "續約", None),  # no year, past: next year
    # Chinese recurrence
    ("每天早上七點 運動", "2026-03-05 07:00", "運動", "daily 07:00"),
    ("每晚十點 關燈", "2026-03-04 22:00", "關燈", "daily 22:00"),
    ("每個月15號 繳房租", "2026-03-15 09:00", "繳房租", "monthly 15 09:00"),
    ("每個月31號 對帳", "2026-03-31 09:00", "對帳", "monthly 31 09:00"),
    ("每週日晚上9點 規劃下週", "2026-03-08 21:00", "規劃下週", "weekly 6 21:00"),
    ("每年5月3日 媽媽生日", "2026-05-03 09:00", "媽媽生日", "yearly 5-3 09:00"),
    ("明天開始每天八點 跑步", "2026-03-05 08:00", "跑步", "daily 08:00"),
    # English
    ("in 10 minutes check the oven", "2026-03-04 10:10", "check the oven", None),
    ("in 2 hours call Bob", "2026-03-04 12:00", "call Bob", None),
    ("in half an hour tea", "2026-03-04 10:30", "tea", None),
    ("remind me in 1h to stretch", "2026-03-04 11:00", "stretch", None),
    ("10 minutes from now tea", "2026-03-04 10:10", "tea", None),
    ("in 3 days pay rent", "2026-03-07 10:00", "pay rent", None),
    ("tomorrow 9am dentist", "2026-03-05 09:00", "dentist", None),
    ("at 5pm water plants", "2026-03-04 17:00", "water plants", None),
    ("tonight at 8 take out trash", "2026-03-04 20:00", "take out trash", None),
    ("next Monday 10:30 standup", "2026-03-09 10:30", "standup", None),
    ("Friday 3pm review", "2026-03-06 15:00", "review", None),
    ("on Mon 9am sync", "2026-03-09 09:00", "sync", None),
    ("Sunday brunch", "2026-03-08 09:00", "brunch", None),
    ("tomorrow morning call mom", "2026-03-05 09:00", "call mom", None),
    ("this evening 7pm yoga", "2026-03-04 19:00", "yoga", None),
    ("tomorrow at 3 call the plumber", "2026-03-05 15:00", "call the plumber", None),
    ("the day after tomorrow at 6pm movie", "2026-03-06 18:00", "movie", None),
    ("remind me to call mom tomorrow at 9", "2026-03-05 09:00", "call mom", None),
    ("remind me: tomorrow 8:30 — call the bank", "2026-03-05 08:30", "call the bank", None),
    ("at 9 meeting", "2026-03-04 21:00", "meeting", None),
    ("08:00 run", "2026-03-05 08:00", "run", None),  # 24-hour form: no guessing pm
    ("at midnight backup", "2026-03-05 00:00", "backup", None),
    ("on 3 May mum's birthday", "2026-05-03 09:00", "mum's birthday", None),
    ("May 3 at noon lunch", "2026-05-03 12:00", "lunch", None),
    ("the 3rd of May dinner", "2026-05-03 09:00", "dinner", None),
    ("3 May 2027 anniversary", "2027-05-03 09:00", "anniversary", None),
    ("2026-05-03 10:00 doctor", "2026-05-03 10:00", "doctor", None),
    ("12/25 party", "2026-12-25 09:00", "party", None),
    # English recurrence
    ("every Monday 8:00 weekly report", "2026-03-09 08:00", "weekly report", "weekly 0 08:00"),
    ("every day at 7 stretch", "2026-03-05 07:00", "stretch", "daily 07:00"),
    ("every Monday at 8am gym", "2026-03-09 08:00", "gym", "weekly 0 08:00"),
    ("Mondays 9am team call", "2026-03-09 09:00", "team call", "weekly 0 09:00"),
    ("every morning vitamins", "2026-03-05 09:00", "vitamins", "daily 09:00"),
    ("on the 15th of every month pay rent", "2026-03-15 09:00", "pay rent", "monthly 15 09:00"),
    ("every year on 3 May mom birthday", "2026-05-03 09:00", "mom birthday", "yearly 5-3 09:00"),
]


@pytest.mark.parametrize(("phrase", "due", "text", "rule"), CASES, ids=[c[0] for c in CASES])
def test_phrasings(phrase: str, due: str, text: str, rule: str | None) -> None:
    parsed = parse_reminder(phrase, NOW, TPE)
    assert parsed.due.tzinfo == TPE
    assert f"{parsed.due:%Y-%m-%d %H:%M}" == due
    assert parsed.text == text
    assert (parsed.recurrence.encode() if parsed.recurrence else None) == rule
    assert parsed.due > NOW


def test_the_table_is_large_and_bilingual() -> None:
    cjk = [c for c in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in c[0])]
    assert len(CASES) >= 40 and len(cjk) >= 20 and len(CASES) - len(cjk) >= 20


def test_what_was_understood_is_said_in_both_languages() -> None:
    parsed = parse_reminder("每週一早上八點提醒我交週報", NOW, TPE)
    assert parsed.understood_zh == (
        "我會在 2026-03-09（週一）08:00（Asia/Taipei）提醒你：交週報，之後每週一 08:00重複"
    )
    assert parsed.understood_en == (
        "I'll remind you on Mon 9 Mar 2026 08:00 (Asia/Taipei): 交週報, then every Monday at 08:00"
    )


@pytest.mark.parametrize(
    ("phrase", "code"),
    [
        ("hello there", "no_time"),
        ("明天九點", "no_text"),
        ("in 10 minutes", "no_text"),
        ("2月30日 測試", "bad_date"),
        ("at 25:00 something", "bad_time"),
        ("13pm lunch", "bad_time"),
        ("2025年1月1日 過去的事", "past"),
        ("明天 in 10 minutes call", "conflict"),
        ("5/3 下週一 開會", "conflict"),
        ("every year call grandma", "no_time"),  # which day of the year?
        ("tomorrow " + "x" * 501, "too_long"),
        ("in 1 minute " + "x" * 100_000, "too_long"),  # refused before any pattern runs
        # odd numbers and far futures: one sentence each, never a KeyError or OverflowError
        ("十十分鐘後 喝水", "bad_number"),
        ("百百分鐘後 喝水", "bad_number"),
        ("十十十號 繳費", "bad_number"),
        ("in 99999999999 minutes drink water", "too_far"),
        ("in 99999999 days x", "too_far"),
        ("9999年12月31日 世紀末", "too_far"),
        ("9999-12-31 23:59 the end", "too_far"),
        ("2200年1月1日 太遠", "too_far"),
    ],
)
def test_errors_are_typed_with_two_sentences(phrase: str, code: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_reminder(phrase, NOW, TPE)
    assert info.value.code == code
    assert info.value.en and info.value.zh and info.value.en != info.value.zh


def test_a_time_past_today_rolls_to_tomorrow_and_a_weekday_to_next_week() -> None:
    late = NOW.replace(hour=18)
    assert f"{parse_reminder('at 5pm water', late, TPE).due:%m-%d %H:%M}" == "03-05 17:00"
    assert f"{parse_reminder('今天早上九點 開會', late, TPE).due:%m-%d %H:%M}" == "03-05 09:00"
    assert f"{parse_reminder('週三 下午三點 練習', late, TPE).due:%m-%d %H:%M}" == "03-11 15:00"
    # a bare hour with both halves of today gone: tomorrow, read as a named day's hour
    night = NOW.replace(hour=22)
    assert f"{parse_reminder('九點 開會', night, TPE).due:%m-%d %H:%M}" == "03-05 09:00"


def test_the_users_zone_decides_the_wall_clock() -> None:
    now_utc = datetime(2026, 3, 4, 2, 0, tzinfo=ZoneInfo("UTC"))  # 10:00 Taipei, 21:00 NY
    taipei = parse_reminder("tomorrow 9am x", now_utc, TPE).due
    new_york = parse_reminder("tomorrow 9am x", now_utc, NY).due
    # "tomorrow" is the user's tomorrow: 3/5 in Taipei, but 3/4 in New York (still 3/3 there)
    assert f"{taipei:%m-%d %H:%M}" == "03-05 09:00"
    assert f"{new_york:%m-%d %H:%M}" == "03-04 09:00"
    assert taipei - new_york == timedelta(hours=11)


def test_dst_spring_forward_in_new_york() -> None:
    now = datetime(2026, 3, 7, 10, 0, tzinfo=NY)  # Saturday; clocks go forward 3/8 02:00
    wall = parse_reminder("tomorrow 9am call", now, NY).due
    assert f"{wall:%Y-%m-%d %H:%M %z}" == "2026-03-08 09:00 -0400"  # wall time kept
    assert wall.astimezone(UTC) - now.astimezone(UTC) == timedelta(hours=22)  # 23-hour day
    elapsed = parse_reminder("in 24 hours call", now, NY).due
    assert f"{elapsed:%Y-%m-%d %H:%M %z}" == "2026-03-08 11:00 -0400"  # real time kept
    gap = parse_reminder("tomorrow 2:30am call", now, NY).due
    assert f"{gap:%H:%M %z}" == "03:30 -0400"  # 02:30 does not exist that night


def test_full_width_digits_are_read() -> None:
    parsed = parse_reminder("明天９：３０ 開會", NOW, TPE)
    assert f"{parsed.due:%m-%d %H:%M}" == "03-05 09:30" and parsed.text == "開會"


def test_a_hundred_years_ahead_is_the_horizon() -> None:
    assert parse_reminder("2126年1月1日 九十九年後", NOW, TPE).due.year == 2126
    with pytest.raises(ParseError) as info:
        parse_reminder("2126年12月1日 一百年後", NOW, TPE)
    assert info.value.code == "too_far" and "100" in info.value.en and "100" in info.value.zh
