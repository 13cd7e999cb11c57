"""Validation of chat messages shared by every backend.

>>> check_messages([{"role": "user", "content": "hi"}])
>>> check_messages([{"role": "user"}])
Traceback (most recent call last):
...
contam.errors.ModelError: chat message 0 needs string 'role' and 'content' fields, got keys ['role']
"""

from __future__ import annotations

from typing import Any

from contam.errors import ModelError


def check_messages(messages: Any) -> None:
    """Raise :class:`ModelError` unless ``messages`` is a non-empty list of role/content dicts."""
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ModelError("a chat prompt must be a non-empty list of {'role': ..., 'content': ...} messages")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            keys = sorted(m) if isinstance(m, dict) else type(m).__name__
            raise ModelError(f"chat message {i} needs string 'role' and 'content' fields, got keys {keys}")
