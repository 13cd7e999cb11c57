"""The equivariance boundary points the right way (paper 003 §4)."""

from __future__ import annotations

from contam.regen.equivariance import sql_experiment, taubench_experiment


def test_sql_boundary():
    answer, query = sql_experiment(range(1, 8))
    assert answer.n_moved > 0.5 * answer.n
    assert answer.pass_moved == 0.0  # a memorized value dies where regeneration moves it
    assert query.pass_all == 1.0 and query.pass_moved == 1.0  # a memorized query survives everything


def test_taubench_boundary():
    rows = {r.leaked_artifact: r for r in taubench_experiment(range(1, 3))}
    state = rows["memorized final state"]
    literal = rows["shipped literal actions"]
    procedure = rows["state-general procedure"]
    dispatch = rows["branch pool + dispatch"]
    assert state.pass_all == 0.0
    assert literal.pass_moved == 0.0  # A0 fails wherever the goal moves
    # re-keying is cosmetic against a state-general procedure: it passes the moved instances whose
    # program branch selection did not flip (the flipped ones it fails, below)
    assert procedure.pass_moved * procedure.n_moved >= 0.95 * (procedure.n_moved - procedure.n_flipped)
    assert dispatch.pass_all == 1.0  # A1 with the branch pool closes the gap
    assert literal.n == procedure.n == 2 * 165
    if procedure.n_flipped:  # a bound procedure cannot follow a branch it never evaluated
        assert procedure.pass_flipped == 0.0 and dispatch.pass_flipped == 1.0
