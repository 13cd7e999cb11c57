"""contam's replay against τ-bench's own: every shipped test task, every output, every final database.

``tests/data/taubench/golden_*.jsonl.gz`` hold what τ-bench's own tool classes (sierra-research/tau-bench
@ 59a200c) return for each gold action of all 165 shipped test tasks and the sha256 of the final
database (PROVENANCE.md there). Under the default ``--semantics tau-bench`` contam must reproduce all
of it; ``--semantics fixed`` differs exactly where docs/fresh-instances.md says.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.errors import ConfigError
from contam.regen.audit import Auditor
from contam.regen.generate import generate, world_state
from contam.regen.job import grade_episodes, run_regen
from contam.regen.replay import ReplayOracle, run_actions
from contam.regen.tools_airline import TAU_CERTIFICATE_IDS, send_certificate
from contam.regen.world import SEMANTICS, State, load_tasks, load_world, tau_db_sha256

GOLDEN = Path(__file__).parent / "data" / "taubench"


def _golden(domain: str) -> list[dict]:
    with gzip.open(GOLDEN / f"golden_{domain}.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _as_json(text: str) -> str:
    """An output as canonical JSON text when it is JSON (so 5 and 5.0 stay apart), else the string."""
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except json.JSONDecodeError:
        return "str:" + text


def _replay(domain: str, index: int, semantics: str = "tau-bench") -> tuple[State, list[str]]:
    st = State(load_world(domain), semantics=semantics)
    run = run_actions(domain, st, load_tasks(domain)[index]["actions"])
    return st, list(run.observations)


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_every_shipped_task_replays_exactly_as_tau_bench(domain):
    gold = _golden(domain)
    tasks = load_tasks(domain)
    assert len(gold) == len(tasks) == {"retail": 115, "airline": 50}[domain]
    bad_out, bad_db, n_out = [], [], 0
    for task, g in zip(tasks, gold, strict=True):
        assert g["index"] == task["index"]
        st, obs = _replay(domain, task["index"])
        assert len(obs) == len(g["outputs"])
        for pos, (mine, theirs) in enumerate(zip(obs, g["outputs"], strict=True)):
            n_out += 1
            if _as_json(mine) != _as_json(theirs):
                bad_out.append((task["index"], pos, task["actions"][pos]["name"]))
        if tau_db_sha256(st) != g["final_sha256"]:
            bad_db.append(task["index"])
        # the rows τ-bench changed are exactly the rows contam changed, field for field (types too)
        for table, rows in g["changed"].items():
            for key, row in rows.items():
                assert json.dumps(st.get(table, key), sort_keys=True) == json.dumps(row, sort_keys=True), (task["index"], key)
    assert bad_out == [] and bad_db == []
    assert n_out == {"retail": 582, "airline": 158}[domain]


def test_db_hash_is_tau_bench_json_dumps_sha256():
    """The incremental hash equals hashing the whole materialised database (the slow, obvious way)."""
    import hashlib

    for domain, index in (("retail", 3), ("airline", 16)):
        st, _ = _replay(domain, index)
        whole = hashlib.sha256(json.dumps(st.materialize(), sort_keys=True).encode()).hexdigest()
        assert tau_db_sha256(st) == whole == _golden(domain)[index]["final_sha256"]


def test_fixed_rounds_the_item_modification_difference():
    # retail task 3 swaps items of #W4776164 for 5 cents more: τ-bench records 0.04999999999999716
    tau, _ = _replay("retail", 3)
    fixed, _ = _replay("retail", 3, "fixed")
    assert tau.get("orders", "#W4776164")["payment_history"][-1]["amount"] == 0.04999999999999716
    assert fixed.get("orders", "#W4776164")["payment_history"][-1]["amount"] == 0.05
    assert tau_db_sha256(fixed) != _golden("retail")[3]["final_sha256"]


def test_fixed_records_the_new_cabin():
    # airline task 2 moves five business reservations to economy; τ-bench leaves "cabin" as it was
    tau, _ = _replay("airline", 2)
    fixed, _ = _replay("airline", 2, "fixed")
    assert load_world("airline").tables["reservations"]["JG7FMM"]["cabin"] == "business"
    assert tau.get("reservations", "JG7FMM")["cabin"] == "business"
    assert fixed.get("reservations", "JG7FMM")["cabin"] == "economy"
    assert tau.get("reservations", "JG7FMM")["flights"] == fixed.get("reservations", "JG7FMM")["flights"]


def test_certificate_ids_tau_bench_and_fixed():
    _, obs = _replay("airline", 16)
    assert obs[1] == "Certificate certificate_3221322 added to user ethan_martin_2396 with amount 150."
    fixed, fobs = _replay("airline", 16, "fixed")
    fid = fobs[1].split()[1]
    assert fid.startswith("certificate_") and fid not in TAU_CERTIFICATE_IDS
    assert fid in fixed.get("users", "ethan_martin_2396")["payment_methods"]
    # τ-bench has three ids per user and then adds nothing; fixed keeps minting fresh ones
    for semantics, want in (("tau-bench", 3), ("fixed", 5)):
        st = State(load_world("airline"), semantics=semantics)
        before = len(st.get("users", "mia_li_3668")["payment_methods"])
        outs = [send_certificate(st, user_id="mia_li_3668", amount=50) for _ in range(5)]
        methods = st.get("users", "mia_li_3668")["payment_methods"]
        assert len(methods) - before == want
        assert sum(bool(o) for o in outs) == want
        if semantics == "tau-bench":
            assert [o.split()[1] for o in outs[:3]] == list(TAU_CERTIFICATE_IDS) and outs[3:] == ["", ""]


def test_semantics_hash_apart_and_grade_under_their_own():
    actions = load_tasks("airline")[2]["actions"]
    tau = ReplayOracle("airline")
    fixed = ReplayOracle("airline", semantics="fixed")
    g_tau, g_fixed = tau.replay(actions).goal_hash, fixed.replay(actions).goal_hash
    assert g_tau != g_fixed
    assert tau.grade(actions, g_tau, [], []).passed and fixed.grade(actions, g_fixed, [], []).passed
    assert not tau.grade(actions, g_fixed, [], []).passed
    with pytest.raises(ConfigError, match="semantics"):
        ReplayOracle("airline", semantics="tau2")
    assert SEMANTICS == ("tau-bench", "fixed")


def test_instances_record_their_semantics(tmp_path):
    inst = generate("airline", 2, seed=7, semantics="fixed")
    assert inst.semantics == "fixed" and inst.to_dict()["semantics"] == "fixed"
    assert generate("airline", 2, seed=7).semantics == "tau-bench"
    assert generate("airline", 2, seed=7).goal_hash != inst.goal_hash
    # the fresh world rebuilt from the instance replays its own goal (under its semantics)
    assert run_actions("airline", world_state(inst), inst.actions).goal_hash == inst.goal_hash
    row = Auditor().audit("airline", 2, 7, semantics="fixed")
    assert row.valid, row.problems
    # the batch job writes it into every instance line and the summary; grading follows the instance
    out = tmp_path / "fixed"
    summary = run_regen(("airline",), [7], out, [2, 16], semantics="fixed")
    assert summary["semantics"] == "fixed" and summary["n_invalid"] == 0
    lines = [json.loads(x) for x in (out / "instances.jsonl").read_text().splitlines()]
    assert [r["semantics"] for r in lines] == ["fixed", "fixed"]
    eps = tmp_path / "eps.jsonl"
    eps.write_text("".join(json.dumps({"key": r["key"], "actions": r["actions"], "messages": r["outputs"]}) + "\n" for r in lines))
    assert grade_episodes(out / "instances.jsonl", eps)["passed"] == 2
    # resuming into that folder with the other semantics is refused, not mixed
    with pytest.raises(ConfigError, match="--semantics fixed"):
        run_regen(("airline",), [7], out, [2, 16])


def test_cli_semantics_option(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["regen", "--domain", "airline", "--seeds", "3", "--tasks", "16", "--out", str(out), "--semantics", "fixed", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["semantics"] == "fixed"
    assert json.loads((out / "instances.jsonl").read_text().splitlines()[0])["semantics"] == "fixed"
    assert main(["regen", "--domain", "airline", "--seeds", "3", "--out", str(tmp_path / "x"), "--semantics", "tau3"]) == 2
    err = capsys.readouterr().err
    assert "semantics" in err and "Traceback" not in err
    assert main(["regen", "--domain", "airline", "--seeds", "3", "--tasks", "16", "--out", str(tmp_path / "d"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["semantics"] == "tau-bench"


def test_a_fourth_booking_overwrites_under_tau_bench_and_is_refused_when_fixed():
    book = dict(load_tasks("airline")[0]["actions"][0])  # one booking (mia_li_3668, certificate + card)
    kwargs = dict(book["kwargs"], payment_methods=[{"payment_id": "credit_card_4421486", "amount": 255}])
    acts = [{"name": "book_reservation", "kwargs": kwargs}] * 4
    tau = ReplayOracle("airline").replay(acts)
    fixed = ReplayOracle("airline", semantics="fixed").replay(acts)
    assert tau.errors == ("", "", "", "") and json.loads(tau.observations[3])["reservation_id"] == "HATHAV"
    assert fixed.errors == ("", "", "", "invalid_argument")


def test_fixed_instances_audit_clean_on_every_task():
    auditor = Auditor()
    bad = [
        (d, i, row.problems[:2])
        for d in ("retail", "airline")
        for i in range(len(load_tasks(d)))
        if not (row := auditor.audit(d, i, 9, semantics="fixed")).valid
    ]
    assert bad == []
