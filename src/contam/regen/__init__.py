"""Evergreen tool-agent tasks: worlds, tools, replay oracle, regeneration operators and audit (paper 003).

>>> from contam import regen
>>> inst = regen.generate("retail", 0, seed=3)     # shipped task 0, seed 3
>>> regen.Auditor().audit("retail", 0, seed=3).valid
True
"""

from contam.regen.audit import Auditor, AuditRow, RegenAuditReport
from contam.regen.generate import Instance, generate, world_state
from contam.regen.rekey import KeyMap
from contam.regen.replay import ReplayOracle, run_actions

__all__ = ["AuditRow", "Auditor", "Instance", "KeyMap", "RegenAuditReport", "ReplayOracle", "generate", "run_actions", "world_state"]
