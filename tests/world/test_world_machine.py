"""A model of the person's world, run against the real service (issue 28).

Hypothesis draws sequences of what two people do with the bot (one on Telegram, one in the
terminal, both through the Desk and the agent the front ends share): remember, chat turns in
which the model proposes memories and reminders (and its server refuses a later round as too
long), confirm / refuse / edit a proposal, ``/edit``, ``/forget``, ``/undo``, pin, restore,
import, ``/tz``, reminders (in N minutes, tomorrow at 9, snooze, done), ``/new``, a restart,
and a kill -9 between two acts or while the model answers; on the memory page, Delete all,
a reminder's Done, Snooze or Delete and the Undo button; ``pcai backup`` between any two acts,
each snapshot restored into a fresh folder and compared. Texts come from the adversarial runs
of tests/trust/textfuncs.py, with secrets planted and half-typed. After every step the world
must hold (tests/world/checks.py); a failing sequence is shrunk to the shortest one.

``make test`` runs a quick pass (tests/world/options.py); ``PCAI_WORLD_EXAMPLES=300`` a bigger
one. Both print ``world machine: <steps> steps, <checks> invariant checks, <n> failures``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant, run_state_machine_as_test

from memory.index.embedders import E5Embedder
from tests.world import checks, options
from tests.world.backup_rules import BackupRules
from tests.world.base import Env
from tests.world.scripted_model import Model, ScriptedModel, ScriptedOllama


class World(BackupRules):
    """Every rule of the person's world, and the invariants after each step."""

    def __init__(self) -> None:
        super().__init__()
        self.scan = checks.SecretScan()

    @invariant()
    def the_world_holds(self) -> None:
        """Memories, proposals, reminders, the log, secrets and the screen (module above)."""
        self.stats.invariants += 1
        problems: list[str] = []
        secrets = set().union(*(p.secrets for p in self.people.values()))
        for person in self.people.values():
            problems += checks.memory_problems(self.data, person)
            problems += checks.reminder_problems(self.data, person)
            problems += checks.pending_problems(person, self.pending_now(person.key))
            problems += checks.log_problems(self.data, person)
        problems += self.scan.problems(self.data, secrets)
        problems += self.snapshot_problems()
        screen = self.proc.screen()
        problems += checks.screen_problems(screen[self.shown :], secrets)
        self.shown = len(screen)
        assert not problems, "\n".join(problems)


@pytest.fixture
def models() -> Iterator[dict[str, Model]]:
    """The person's model server on 127.0.0.1, on each wire (each run draws one)."""
    servers: list[Model] = [ScriptedModel(), ScriptedOllama()]
    yield {s.backend: s for s in servers}
    for server in servers:
        server.stop()


def test_every_sequence_of_acts_keeps_the_persons_world(
    embedder: E5Embedder, models: dict[str, Model], tmp_path: Path
) -> None:
    env = Env(embedder, models, tmp_path)
    machine = type("World", (World,), {"env": env})
    try:
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=options.examples(),
                stateful_step_count=options.steps(),
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
                # make test's quick pass is the same sequences every run (a failure there is
                # reproducible); the bigger run (PCAI_WORLD_EXAMPLES) draws new ones each time.
                derandomize=not options.EXAMPLES,
            ),
        )
    except BaseException as exc:
        env.stats.failures += len(getattr(exc, "exceptions", ())) or 1
        raise
    finally:
        stats = env.stats
        print(
            f"\nworld machine: {stats.steps} steps, {stats.invariants} invariant checks, "
            f"{stats.failures} failures"
        )
