"""BFCL v4 multi-turn regeneration (issue 23): real shipped tasks through BFCL's own classes.

BFCL's own state checker (``multi_turn_checker.state_checker``, pure Python, importable without
the harness's dependencies) is used as the independent referee wherever states are compared.
"""

from __future__ import annotations

import ast
import json

import pytest

pytest.importorskip("bfcl_eval")

from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import state_checker

from contam.cli.main import main
from contam.regen.bfcl.audit import audit
from contam.regen.bfcl.calls import CallSyntaxError, parse_call, replay
from contam.regen.bfcl.equivariance import bfcl_check, bfcl_experiment
from contam.regen.bfcl.reseed import REASONS, BfclInstance, BfclRejection, Generated, generate, plan
from contam.regen.bfcl.world import CLASS_MODULE, instantiate, load_tasks, snapshot, world_class


def _sample() -> list[str]:
    """One task per (category, class): every category and all 8 classes."""
    out, seen = [], set()
    for t in load_tasks():
        for c in t.involved_classes:
            if (t.category, c) not in seen:
                seen.add((t.category, c))
                if t.id not in out:
                    out.append(t.id)
    return out


def _direct(task_id: str) -> tuple[list[list[str]], dict]:
    """An independent replay: ast.literal_eval on each argument, getattr on the instances."""
    t = next(x for x in load_tasks() if x.id == task_id)
    insts = instantiate(t.involved_classes, t.initial_config, t.long_context)
    outs = []
    for turn in t.ground_truth:
        row = []
        for s in turn:
            node = ast.parse(s, mode="eval").body
            owner = [o for o in insts.values() if hasattr(o, node.func.id)][-1]  # later class wins, as in BFCL
            args = [ast.literal_eval(a) for a in node.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            res = getattr(owner, node.func.id)(*args, **kwargs)
            row.append(res if isinstance(res, str) else json.dumps(res) if isinstance(res, dict) else str(res))
        outs.append(row)
    return outs, insts


def test_loader_has_800_tasks_and_8_classes():
    tasks = load_tasks()
    assert len(tasks) == 800
    assert {t.category for t in tasks} == {"base", "miss_func", "miss_param", "long_context"}
    assert {c for t in tasks for c in t.involved_classes} == set(CLASS_MODULE)
    assert all(len(t.ground_truth) == len(t.question) for t in tasks)


@pytest.mark.parametrize(
    "bad",
    [
        "__import__('os').system('ls')",
        "os.system('ls')",
        "cd(folder=open('/etc/passwd').read())",
        "cd(folder=lambda: 1)",
        "cd(folder=x)",
        "cd(**{'folder': 'a'})",
        "cd(*['a'])",
        "cd(folder=[i for i in 'ab'])",
        "cd(folder='a') + 1",
        "_load_scenario({})",
        "cd(folder='a'); ls()",
        "cd(folder=f'{1}')",
    ],
)
def test_parser_refuses_anything_but_a_plain_literal_call(bad):
    with pytest.raises(CallSyntaxError) as e:
        parse_call(bad)
    assert str(e.value) and "\n" not in str(e.value)


def test_parser_reads_literals_and_renders_back():
    c = parse_call("f('a', x=-2.5, y=[1, {'k': (True, None)}])")
    assert c.name == "f" and c.args == ("a",) and dict(c.kwargs) == {"x": -2.5, "y": [1, {"k": (True, None)}]}
    assert parse_call(c.render()) == c
    # every shipped ground-truth call parses
    assert sum(len(turn) for t in load_tasks() for turn in t.ground_truth) == sum(
        1 for t in load_tasks() for turn in t.ground_truth for s in turn if parse_call(s)
    )


@pytest.mark.parametrize("task_id", _sample()[:12])
def test_shipped_replay_equals_direct_method_calls(task_id):
    t = next(x for x in load_tasks() if x.id == task_id)
    ours = replay(t.initial_config, t.involved_classes, t.long_context, t.ground_truth)
    outs, insts = _direct(task_id)
    assert [[o.output for o in turn] for turn in ours.outcomes] == outs
    assert ours.final == snapshot(insts)
    assert state_checker(ours.instances, insts)["valid"]  # BFCL's own checker agrees


def test_hand_written_file_system_replay():
    t = next(x for x in load_tasks() if x.id == "multi_turn_long_context_3")
    fs = world_class("GorillaFileSystem")()
    fs._load_scenario(json.loads(json.dumps(t.initial_config["GorillaFileSystem"])), long_context=True)
    fs.find(path=".", name="test")
    fs.cd(folder="projects")
    fs.cd(folder="photography")
    fs.cp(source="test_image1.jpg", destination="backup_tests")
    fs.cp(source="test_document.txt", destination="backup_tests")
    ours = replay(t.initial_config, t.involved_classes, True, t.ground_truth)
    assert ours.final == snapshot({"GorillaFileSystem": fs})
    assert ours.final != ours.initial


def test_regenerated_instances_audit_clean_on_all_categories_and_classes():
    ids = _sample()
    classes, cats, n = set(), set(), 0
    for tid in ids:
        for seed in (0, 7):
            g = generate(tid, seed)
            if isinstance(g, BfclRejection):
                assert g.reason in REASONS
                continue
            row = audit(g)
            assert row.valid, (tid, seed, row.problems)
            n += 1
            classes.update(g.instance.involved_classes)
            cats.add(g.instance.category)
            # BFCL's own checker: the fresh goal is not the memorised shipped state at the last turn
            p = plan(tid)
            fresh = replay(g.instance.initial_config, g.instance.involved_classes, g.instance.long_context, g.instance.ground_truth)
            moved = any(a != b for a, b in zip(fresh.states, p.shipped.states, strict=True))
            assert moved
    assert classes == set(CLASS_MODULE) and len(cats) == 4 and n >= 0.9 * 2 * len(ids)


def test_rekeying_is_consistent_in_question_config_and_calls():
    g = generate("multi_turn_base_0", 3)
    assert isinstance(g, Generated)
    inst = g.instance
    text = json.dumps([inst.question, inst.initial_config, inst.ground_truth])
    for orig, fresh in zip(g.draw.lm.orig.values(), g.draw.lm.fwd.values(), strict=True):
        assert fresh in text
        assert orig not in text
    assert "rekey" in inst.operators


def test_determinism_same_seed_same_hash_other_seed_other_instance():
    a, b, c = generate("multi_turn_miss_param_120", 4), generate("multi_turn_miss_param_120", 4), generate("multi_turn_miss_param_120", 5)
    assert isinstance(a, Generated) and isinstance(b, Generated) and isinstance(c, Generated)
    assert a.instance == b.instance and a.instance.instance_hash == b.instance.instance_hash
    assert a.instance.instance_hash != c.instance.instance_hash
    assert a.instance.initial_config != next(t for t in load_tasks() if t.id == "multi_turn_miss_param_120").initial_config


def test_planted_leak_fails_the_audit():
    g = generate("multi_turn_base_14", 2)
    assert isinstance(g, Generated) and audit(g).valid
    original = next(iter(g.draw.lm.orig.values()))
    q = json.loads(json.dumps(g.instance.question))
    q[0][0]["content"] += f" Also ask {original.upper()} about it."
    leaky = BfclInstance.from_dict({**g.instance.to_dict(), "question": q})
    row = audit(Generated(leaky, g.draw, g.run, g.calls), determinism=False)
    assert not row.covered and any(original.casefold() in p.casefold() for p in row.problems)
    # and a leak into the config is caught too
    cfg = json.loads(json.dumps(g.instance.initial_config))
    cls = next(iter(cfg))
    cfg[cls]["note"] = f"from {original}"
    row = audit(
        Generated(BfclInstance.from_dict({**g.instance.to_dict(), "initial_config": cfg}), g.draw, g.run, g.calls), determinism=False
    )
    assert not row.covered


def test_tampered_goal_hash_fails_faithfulness():
    g = generate("multi_turn_base_100", 1)
    assert isinstance(g, Generated)
    bad = BfclInstance.from_dict({**g.instance.to_dict(), "goal_hashes": ["0" * 64] * len(g.instance.goal_hashes)})
    row = audit(Generated(bad, g.draw, g.run, g.calls), determinism=False)
    assert not row.faithful and not row.deterministic


def test_read_only_task_is_rejected_with_a_reason():
    r = generate("multi_turn_base_13", 0)
    assert isinstance(r, BfclRejection) and r.reason == "read_only"


def test_bfcl_check_grades_like_the_checker():
    g = generate("multi_turn_base_150", 0)
    assert isinstance(g, Generated)
    assert bfcl_check(g.instance, g.instance.ground_truth)
    assert not bfcl_check(g.instance, [[] for _ in g.instance.ground_truth])


def test_equivariance_small_range():
    ids = [t.id for t in load_tasks()][::40]
    rows, meta = bfcl_experiment(range(100, 102), ids)
    by = {r.leaked_artifact: r for r in rows}
    assert meta["instances"] >= 30
    assert by["memorised final state"].pass_all == 0.0
    assert by["state-general procedure"].pass_all == 1.0
    assert 0.0 <= by["memorised call sequence"].pass_all < 1.0
    r = by["memorised final state"]
    assert r.ci_low == 0.0 and 0 < r.ci_high < 0.15


def test_cli_end_to_end_and_resume(tmp_path, capsys):
    out = tmp_path / "fresh"
    argv = ["regen", "--benchmark", "bfcl", "--seeds", "0:2", "--tasks", "10:16", "--out", str(out), "--json"]
    assert main(argv) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["benchmark"] == "bfcl" and s["n_invalid"] == 0 and s["task_seeds"] == 12
    assert s["clean"] + sum(s["rejected_by_reason"].values()) == 12
    lines = (out / "instances.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    for f in ("key", "question", "initial_config", "ground_truth", "goal_hashes", "instance_hash", "valid"):
        assert f in rec
    assert len((out / "audit.jsonl").read_text().splitlines()) == len(lines) == s["n"]
    assert main(argv) == 0  # resumes: nothing redone or duplicated
    assert len((out / "instances.jsonl").read_text().splitlines()) == len(lines)
    capsys.readouterr()
    assert main(["regen", "--benchmark", "mars", "--out", str(out)]) == 2
    assert main(["regen", "--benchmark", "bfcl", "--seeds", "0", "--tasks", "900", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--benchmark" in err and "--tasks" in err and "Traceback" not in err


def test_cli_equivariance_bfcl(capsys):
    assert main(["regen", "equivariance", "--benchmark", "bfcl", "--bfcl-seeds", "100:101", "--tasks", "0:30", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    rows = {r["leaked_artifact"]: r for r in rep["rows"]}
    assert rows["memorised final state"]["passed"] == 0
    assert rows["state-general procedure"]["pass_all"] == 1.0
