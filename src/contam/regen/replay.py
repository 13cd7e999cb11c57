"""The replay oracle: run a gold program on a fresh copy of a world, hash the result.

Paper 003 §2-3: the goal state of a task is not annotated, it is computed by replaying the
task's gold actions (the paper's reference program); grading is τ-bench's: the canonical final
state after the agent's actions must hash equal to the replayed goal, and every required output
must appear in the agent's messages.

>>> from contam.regen.world import load_tasks
>>> oracle = ReplayOracle("retail")
>>> run = oracle.replay(load_tasks("retail")[0]["actions"])
>>> run.errors
('', '', '', '', '')
>>> oracle.grade(load_tasks("retail")[0]["actions"], run.goal_hash, outputs=[], messages=[]).passed
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from contam.records import Record
from contam.regen import tools_airline, tools_retail
from contam.regen.tools_retail import ToolError
from contam.regen.world import DEFAULT_SEMANTICS, IdMap, Patch, State, World, check_semantics, load_world

DOMAIN_TOOLS: dict[str, dict[str, Callable[..., str]]] = {"retail": tools_retail.TOOLS, "airline": tools_airline.TOOLS}


@dataclass(frozen=True)
class Replay(Record):
    """The outcome of replaying one action list.

    ``errors[i]`` is "" when action ``i`` ran clean, else the error kind
    (``not_found``, ``wrong_status``, ``insufficient_balance``, ``invalid_argument``, ``unknown_tool``).
    """

    goal_hash: str
    errors: tuple[str, ...]
    observations: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not any(self.errors)


@dataclass(frozen=True)
class Grade(Record):
    """τ-bench's grade of one episode: state hash equality and required outputs said."""

    passed: bool
    state_match: bool
    outputs_found: tuple[bool, ...]


def call_tool(domain: str, state: State, name: str, kwargs: dict[str, Any]) -> str:
    """Run one tool call; raises :class:`ToolError` on an invalid call (unknown tool or arguments too)."""
    fn = DOMAIN_TOOLS[domain].get(name)
    if fn is None:
        err = ToolError(f"unknown tool {name}")
        err.kind = "unknown_tool"
        raise err
    try:
        return fn(state, **kwargs)
    except TypeError as e:  # missing / unexpected arguments are the caller's mistake, not ours
        raise tools_retail.InvalidArgument(f"bad arguments for {name}: {e}") from None
    except (KeyError, IndexError, AttributeError) as e:  # malformed nested arguments
        raise tools_retail.InvalidArgument(f"malformed arguments for {name}: {e!r}") from None


def run_actions(domain: str, state: State, actions: Sequence[dict[str, Any]]) -> Replay:
    """Apply ``actions`` to ``state`` in order (it is mutated) and record each call's result."""
    errors, obs = [], []
    for act in actions:
        try:
            obs.append(call_tool(domain, state, act["name"], act.get("kwargs") or {}))
            errors.append("")
        except ToolError as e:
            obs.append(f"Error: {e}")
            errors.append(e.kind)
    return Replay(state.state_hash(), tuple(errors), tuple(obs))


def normalize_output(text: str) -> str:
    """τ-bench's normalisation of what the agent said: lower case, commas removed."""
    return text.lower().replace(",", "")


def outputs_found(outputs: Sequence[str], messages: Sequence[str], semantics: str = DEFAULT_SEMANTICS) -> tuple[bool, ...]:
    """Which required outputs the agent said, as τ-bench decides it: an output counts when one
    message contains it, case-insensitively, after the message's commas are removed. τ-bench
    lower-cases the output but leaves its commas, so an output with a comma can never be found;
    ``fixed`` removes them from the output too.

    >>> outputs_found(["1,000", "Blue"], ["It costs 1,000 and is blue."])
    (False, True)
    >>> outputs_found(["1,000"], ["It costs 1,000."], "fixed")
    (True,)
    """
    said = [normalize_output(m) for m in messages]
    fixed = semantics == "fixed"
    return tuple(any((normalize_output(o) if fixed else o.lower()) in m for m in said) for o in outputs)


class ReplayOracle:
    """Goal states by replay, and τ-bench grading, for one domain.

    ``idmap`` and ``patches`` select a regenerated world (see :mod:`contam.regen.generate`);
    without them it is the shipped world. ``semantics``: ``tau-bench`` (τ-bench's tools, quirks
    included) or ``fixed`` (see :data:`contam.regen.world.SEMANTICS`).
    """

    def __init__(
        self,
        domain: str,
        idmap: IdMap | None = None,
        patches: dict[tuple[str, str], Patch] | None = None,
        patch_key: str = "",
        semantics: str = DEFAULT_SEMANTICS,
    ) -> None:
        self.domain = domain
        self.semantics = check_semantics(semantics)
        self.world: World = load_world(domain)
        self.idmap = idmap
        self.patches = patches
        self.patch_key = patch_key

    def fresh_state(self) -> State:
        """A fresh, untouched copy of this oracle's world."""
        return State(self.world, self.idmap, self.patches, self.patch_key, self.semantics)

    def replay(self, actions: Sequence[dict[str, Any]]) -> Replay:
        """Replay ``actions`` on a fresh copy: goal hash, per-position errors, observations."""
        return run_actions(self.domain, self.fresh_state(), actions)

    def grade(self, agent_actions: Sequence[dict[str, Any]], goal_hash: str, outputs: Sequence[str], messages: Sequence[str]) -> Grade:
        """Grade an agent episode (its tool calls and its messages) against a goal hash."""
        final = self.replay(agent_actions).goal_hash
        found = outputs_found(outputs, messages, self.semantics)
        return Grade(final == goal_hash and all(found), final == goal_hash, found)
