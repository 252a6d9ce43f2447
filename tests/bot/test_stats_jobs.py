"""/stats reports each scheduled job's last run next to the user's counts."""

from __future__ import annotations

from bot.app import Services
from bot.frontdesk.backend import backend_for
from bot.jobs import JobRunner, default_jobs


async def test_stats_show_the_last_run_of_each_job(services: Services) -> None:
    backend = backend_for(services)
    runner = JobRunner(services, tz=services.tz)
    backend.job_status = runner.summary
    services.memory.remember("cli_ann", "我每天早上喝烏龍茶，不加糖")

    before = dict(backend.stats("cli_ann"))
    assert before["memories"] == "1 (1 active)" and "index" not in before

    index_job = next(spec for spec in default_jobs() if spec.name == "index")
    await runner.run(index_job)

    after = dict(backend.stats("cli_ann"))
    assert after["index"].split(" ", 2)[2] == "ok"  # when and whether: the report is the log's
    assert after["memories"] == "1 (1 active)"
