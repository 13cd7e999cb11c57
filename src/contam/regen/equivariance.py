"""The equivariance experiment: does regeneration defeat a leak? It depends on what is scored.

Paper 003 §4-5. Holding the world and the regenerator fixed, score a perfectly leaked
adversary in different ways:

(a) a relational substrate (SQLite, stdlib): questions with gold SQL over rows the seed
    regenerates. A memorized *answer value* passes ~0% of instances where regeneration moves
    the answer; a memorized *query*, graded by execution, passes 100% — regeneration is
    cosmetic against it.
(b) τ-bench: on regenerated instances, replaying the shipped literal actions (or the
    memorized final state) fails wherever the goal moves, while a state-general procedure —
    the shipped program with every id bound to where it was read (the instruction or an
    earlier observation), not to its literal value — survives re-keying; only branch
    selection, which needs the instruction's predicate, breaks it. Adversary A1 (memorize the
    re-key transport and the finite branch pool) passes everything.

>>> rows = sql_experiment(seeds=range(1, 4))
>>> [r.pass_moved for r in rows if r.substrate == "sqlite"]
[0.0, 1.0]
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from contam.records import Record
from contam.regen.generate import generate_full, rekey_actions, task_plan, world_map, world_state
from contam.regen.replay import call_tool, run_actions
from contam.regen.tools_retail import ToolError
from contam.regen.world import KEY_CLASS, State, load_tasks, load_world

# --------------------------------------------------------------------------- (a) SQLite
_REGIONS = ("north", "south", "east", "west", "central")
_PRODUCTS = ("lamp", "kettle", "chair", "desk", "tent", "boots", "phone", "watch")

#: (question, gold SQL) pairs over the substrate's schema.
SQL_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("How many customers live in the north?", "SELECT COUNT(*) FROM customers WHERE region = 'north'"),
    ("How many orders are there?", "SELECT COUNT(*) FROM orders"),
    ("How many kettles were ordered in total?", "SELECT COALESCE(SUM(qty), 0) FROM orders WHERE product = 'kettle'"),
    ("What is the total revenue?", "SELECT ROUND(SUM(qty * price), 2) FROM orders"),
    (
        "What is the revenue from the south?",
        "SELECT ROUND(COALESCE(SUM(o.qty * o.price), 0), 2) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.region = 'south'",
    ),
    ("Which product sold the most units?", "SELECT product FROM orders GROUP BY product ORDER BY SUM(qty) DESC, product LIMIT 1"),
    (
        "Which customer spent the most?",
        "SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.id ORDER BY SUM(o.qty * o.price) DESC, c.name LIMIT 1",
    ),
    ("What is the highest unit price paid for a desk?", "SELECT MAX(price) FROM orders WHERE product = 'desk'"),
    ("What is the average order quantity?", "SELECT ROUND(AVG(qty), 2) FROM orders"),
    ("How many customers have no orders?", "SELECT COUNT(*) FROM customers WHERE id NOT IN (SELECT customer_id FROM orders)"),
    ("Which region has the most customers?", "SELECT region FROM customers GROUP BY region ORDER BY COUNT(*) DESC, region LIMIT 1"),
    ("How many orders have a quantity above 3?", "SELECT COUNT(*) FROM orders WHERE qty > 3"),
)


def sql_world(seed: int, customers: int = 40, orders: int = 200) -> sqlite3.Connection:
    """An in-memory database whose rows are drawn from ``seed`` (seed 0 = the "shipped" world)."""
    rng = random.Random(f"sql-world|{seed}")
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, region TEXT)")
    con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, product TEXT, qty INTEGER, price REAL)")
    con.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [(i, f"customer{rng.randrange(10**6):06d}", rng.choice(_REGIONS)) for i in range(customers)],
    )
    con.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
        [(i, rng.randrange(customers), rng.choice(_PRODUCTS), rng.randint(1, 6), round(rng.uniform(5, 500), 2)) for i in range(orders)],
    )
    return con


def _answer(con: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql).fetchall()]


@dataclass(frozen=True)
class BoundaryRow(Record):
    """One row of the boundary table: a leaked artifact scored one way, on fresh instances."""

    substrate: str
    scored_target: str
    leaked_artifact: str
    adversary: str
    n: int
    pass_all: float
    n_moved: int
    pass_moved: float
    regeneration_holds: str
    n_flipped: int = 0
    pass_flipped: float | None = None


def _rate(xs: list[bool]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def sql_experiment(seeds: Iterable[int] = range(1, 51)) -> list[BoundaryRow]:
    """(a): memorized answer value vs memorized gold query on regenerated rows."""
    shipped = sql_world(0)
    memorized = {q: _answer(shipped, sql) for q, sql in SQL_QUESTIONS}
    ans_all, ans_moved, q_all, q_moved = [], [], [], []
    for seed in seeds:
        con = sql_world(seed)
        for q, sql in SQL_QUESTIONS:
            gold = _answer(con, sql)
            moved = gold != memorized[q]
            ok_answer = memorized[q] == gold  # the leaked value, compared to the fresh answer
            ok_query = _answer(con, sql) == gold  # the leaked query, executed on the fresh rows
            ans_all.append(ok_answer)
            q_all.append(ok_query)
            if moved:
                ans_moved.append(ok_answer)
                q_moved.append(ok_query)
    return [
        BoundaryRow(
            "sqlite", "answer value", "memorized answer", "A0", len(ans_all), _rate(ans_all), len(ans_moved), _rate(ans_moved), "yes vs A0"
        ),
        BoundaryRow(
            "sqlite",
            "query (executed)",
            "memorized gold SQL",
            "A0",
            len(q_all),
            _rate(q_all),
            len(q_moved),
            _rate(q_moved),
            "no (fixed point)",
        ),
    ]


# --------------------------------------------------------------------------- (b) τ-bench
def _parse(obs: str) -> Any:
    if obs[:1] in ("{", "["):
        try:
            return json.loads(obs)
        except json.JSONDecodeError:
            return obs
    return obs


def _find(node: Any, value: str) -> list[tuple] | None:
    """Path to the first occurrence of ``value`` in ``node`` (keys by name and position)."""
    if isinstance(node, str):
        return [] if node == value else None
    if isinstance(node, dict):
        for pos, (k, v) in enumerate(node.items()):
            if k == value:
                return [("key", k, pos)]
            sub = _find(v, value)
            if sub is not None:
                return [("at", k, pos), *sub]
    if isinstance(node, list):
        for i, v in enumerate(node):
            sub = _find(v, value)
            if sub is not None:
                return [("idx", i), *sub]
    return None


def _follow(node: Any, path: list[tuple]) -> Any:
    for step in path:
        if step[0] == "idx":
            node = node[step[1]]
        elif step[0] == "at":
            # A key that is itself an id (a variant, a payment method) is found by position.
            node = node[step[1]] if step[1] in node else list(node.values())[step[2]]
        else:
            return step[1] if step[1] in node else list(node.keys())[step[2]]
    return node


#: Read tools by the id argument they take (a state-general procedure may read any entity it
#: has a handle on; reads never change the state, so they cannot change the grade).
_READS = {
    "retail": {"user_id": "get_user_details", "order_id": "get_order_details"},
    "airline": {"user_id": "get_user_details", "reservation_id": "get_reservation_details"},
}


def lift(domain: str, index: int) -> list[dict[str, Any]]:
    """The shipped program with each id argument bound to where it was read, not to its value.

    Bindings: ``("instr", cls, value)`` — the value the instruction states (the agent reads it
    from the fresh instruction); ``("obs", j, path)`` — read from observation ``j``;
    ``("lit", value)`` — a literal nothing shows (a guess the gold program tries). Where the
    shipped program uses an id it never looked up, the lifted one first reads the entity the
    call is about (and, in retail, the products of its items), as any agent would.
    """
    task = load_tasks(domain)[index]
    plan = task_plan(domain, index)
    said = {(s.cls, s.value) for s in plan.instruction_spans}
    state = State(load_world(domain))
    obs: list[Any] = []
    program: list[dict[str, Any]] = []

    def bind(obj: Any, cls: str | None) -> Any:
        if isinstance(obj, dict):
            return {k: bind(v, KEY_CLASS.get(k)) for k, v in obj.items()}
        if isinstance(obj, list):
            return [bind(v, cls) for v in obj]
        if isinstance(obj, str) and cls is not None and obj:
            if (cls, obj) in said:
                return {"$bind": ["instr", cls, obj]}
            for j in range(len(obs) - 1, -1, -1):
                path = _find(obs[j], obj)
                if path is not None:
                    return {"$bind": ["obs", j, path]}
            return {"$bind": ["lit", obj]}
        return obj

    def emit(name: str, kwargs: dict[str, Any]) -> None:
        program.append({"name": name, "kwargs": bind(kwargs, None)})
        try:
            obs.append(_parse(call_tool(domain, state, name, kwargs)))
        except ToolError as e:
            obs.append(f"Error: {e}")

    def unresolved(kwargs: dict[str, Any]) -> bool:
        return "lit" in json.dumps(bind(kwargs, None))

    # Look the user up the way the instruction allows, then read everything they own.
    user = state.get("users", task["user_id"])
    if user is not None:
        name, zip_ = user["name"], user["address"]["zip"]
        if ("user", task["user_id"]) in said:
            emit("get_user_details", {"user_id": task["user_id"]})
        elif ("email", user["email"]) in said:
            emit("find_user_id_by_email", {"email": user["email"]})
            emit("get_user_details", {"user_id": task["user_id"]})
        elif {("name", name["first_name"]), ("name", name["last_name"]), ("zip", zip_)} <= said and domain == "retail":
            emit("find_user_id_by_name_zip", {"first_name": name["first_name"], "last_name": name["last_name"], "zip": zip_})
            emit("get_user_details", {"user_id": task["user_id"]})
        owned = ("order_id", user.get("orders", [])) if domain == "retail" else ("reservation_id", user.get("reservations", []))
        if obs:
            for ref in owned[1]:
                emit(_READS[domain][owned[0]], {owned[0]: ref})

    for act in task["actions"]:
        kwargs = act.get("kwargs") or {}
        if unresolved(kwargs):
            for key, tool in _READS[domain].items():
                if isinstance(kwargs.get(key), str) and state.get(_TABLE[key], kwargs[key]) is not None:
                    emit(tool, {key: kwargs[key]})
            if domain == "retail" and unresolved(kwargs) and isinstance(kwargs.get("order_id"), str):
                order = state.get("orders", kwargs["order_id"])
                for pid in dict.fromkeys(i["product_id"] for i in (order or {}).get("items", [])):
                    emit("get_product_details", {"product_id": pid})
            if domain == "airline" and unresolved(kwargs):
                # New flights come from a search over the route and date (airports are not ids).
                for leg in kwargs.get("flights") or []:
                    flight = state.get("flights", leg.get("flight_number", ""))
                    if flight is not None:
                        emit(
                            "search_direct_flight", {"origin": flight["origin"], "destination": flight["destination"], "date": leg["date"]}
                        )
        emit(act["name"], kwargs)
    return program


_TABLE = {"user_id": "users", "order_id": "orders", "reservation_id": "reservations"}


def run_lifted(program: list[dict[str, Any]], domain: str, state: State, instr_value: Any) -> str:
    """Execute a lifted program on ``state``, resolving bindings from what it observes; final hash."""
    obs: list[Any] = []

    def resolve(obj: Any) -> Any:
        if isinstance(obj, dict):
            if set(obj) == {"$bind"}:
                kind, *rest = obj["$bind"]
                if kind == "instr":
                    return instr_value(rest[0], rest[1])
                if kind == "obs":
                    try:
                        return _follow(obs[rest[0]], rest[1])
                    except (KeyError, IndexError, TypeError, AttributeError):
                        return "unresolved"
                return rest[0]
            return {k: resolve(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [resolve(v) for v in obj]
        return obj

    for act in program:
        try:
            obs.append(_parse(call_tool(domain, state, act["name"], resolve(act["kwargs"]))))
        except ToolError as e:
            obs.append(f"Error: {e}")
    return state.state_hash()


def taubench_experiment(seeds: Iterable[int] = range(1, 11), domains: tuple[str, ...] = ("retail", "airline")) -> list[BoundaryRow]:
    """(b): shipped literal answer vs state-general procedure vs A1 transport, on fresh instances."""
    res: dict[str, list[tuple[bool, bool, bool]]] = {k: [] for k in ("state", "literal", "lifted", "a1_transport", "a1_dispatch")}
    shipped_actions = {(d, i): list(load_tasks(d)[i]["actions"]) for d in domains for i in range(len(load_tasks(d)))}
    lifted = {(d, i): lift(d, i) for d in domains for i in range(len(load_tasks(d)))}
    shipped_goal = {}
    for d in domains:
        for i, t in enumerate(load_tasks(d)):
            st = State(load_world(d))
            shipped_goal[(d, i)] = run_actions(d, st, t["actions"]).goal_hash
    for seed in seeds:
        for d in domains:
            km = world_map(d, seed)
            for i, task in enumerate(load_tasks(d)):
                inst, skm, deriv = generate_full(d, i, seed, km)
                moved = world_state(inst, km).state_hash() != inst.goal_hash
                # flipped: branch selection re-derived a program other than the shipped one
                flipped = inst.branch is not None and deriv.actions != shipped_actions[(d, i)]
                res["state"].append((shipped_goal[(d, i)] == inst.goal_hash, moved, flipped))
                lit = run_actions(d, world_state(inst, km), task["actions"]).goal_hash
                res["literal"].append((lit == inst.goal_hash, moved, flipped))
                h = run_lifted(lifted[(d, i)], d, world_state(inst, km), lambda cls, v, m=skm: m.fwd(cls, v))
                res["lifted"].append((h == inst.goal_hash, moved, flipped))
                # A1: the public re-key transport applied to the memorized shipped actions.
                a1 = run_actions(d, world_state(inst, km), rekey_actions(list(task["actions"]), skm, d, task_plan(d, i).extra))
                res["a1_transport"].append((a1.goal_hash == inst.goal_hash, moved, flipped))
                # A1 with the authored branch pool and its dispatch rule: the generator's derivation.
                a1d = run_actions(d, world_state(inst, km), rekey_actions(deriv.actions, skm, d, task_plan(d, i).extra))
                res["a1_dispatch"].append((a1d.goal_hash == inst.goal_hash, moved, flipped))

    def row(key: str, artifact: str, adversary: str, holds: str) -> BoundaryRow:
        xs = res[key]
        mv = [ok for ok, m, _ in xs if m]
        fl = [ok for ok, _, f in xs if f]
        return BoundaryRow(
            "tau-bench",
            "final-state hash",
            artifact,
            adversary,
            len(xs),
            _rate([ok for ok, _, _ in xs]),
            len(mv),
            _rate(mv),
            holds,
            len(fl),
            _rate(fl) if fl else None,
        )

    return [
        row("state", "memorized final state", "A0", "yes vs A0"),
        row("literal", "shipped literal actions", "A0", "yes vs A0"),
        row("lifted", "state-general procedure", "procedure", "re-key: no; flipped branch: yes"),
        row("a1_transport", "actions + re-key transport", "A1", "only flipped branches"),
        row("a1_dispatch", "branch pool + dispatch", "A1", "no"),
    ]


def boundary_table(sql_seeds: Iterable[int] = range(1, 51), tau_seeds: Iterable[int] = range(1, 11)) -> list[BoundaryRow]:
    """Both halves of the experiment, as the rows of the paper's boundary table."""
    return sql_experiment(sql_seeds) + taubench_experiment(tau_seeds)
