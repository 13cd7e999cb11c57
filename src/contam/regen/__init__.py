"""Evergreen tool-agent tasks: worlds, tools, replay oracle, regeneration operators and audit."""
