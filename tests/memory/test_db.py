"""Opening the same new database from several processes at once."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OPEN_LOOP = """
import sys, time
from pathlib import Path
from memory.base.db import connect
folder, files, go = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
me, processes = sys.argv[4], int(sys.argv[5])
give_up = time.monotonic() + 60  # an opener that died must not leave the others waiting


def wait(ready):
    while not ready():
        if time.monotonic() > give_up:
            sys.exit("another opener never arrived")
        time.sleep(0.001)


wait(go.exists)
for i in range(files):
    (folder / f"{i}.{me}.ready").touch()  # a barrier: all openers race for each new file
    wait(lambda: len(list(folder.glob(f"{i}.*.ready"))) >= processes)
    conn = connect(folder / f"{i}.db", vec=False)
    conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
    conn.execute("INSERT INTO t VALUES (?)", (me,))
    conn.commit()
    conn.close()
"""

PROCESSES = 4
FILES = 40


def test_processes_opening_one_new_file_at_once_all_get_in(tmp_path: Path) -> None:
    # Switching a new file to WAL can answer "database is locked" at once, without the
    # busy handler, when another process switches it too: every opener must still get in.
    go = tmp_path / "go"
    openers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                OPEN_LOOP,
                str(tmp_path),
                str(FILES),
                str(go),
                f"p{n}",
                str(PROCESSES),
            ],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        time.sleep(1.0)  # every interpreter is up and waiting
        go.touch()
        for opener in openers:
            _, err = opener.communicate(timeout=90)
            assert opener.returncode == 0, err
    finally:
        for opener in openers:
            opener.kill()
    from memory.base.db import connect

    for i in range(FILES):
        conn = connect(tmp_path / f"{i}.db", vec=False)
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == PROCESSES
        conn.close()
