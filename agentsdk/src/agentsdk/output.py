"""Structured final answers: ``Agent(output_type=...)``."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class OutputSpec:
    """Schema, validator and retry prompt for an ``output_type``; built once per agent."""

    def __init__(self, output_type: Any, retries: int = 2):
        self.type = output_type
        self.retries = retries
        self.adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        self.schema: dict[str, Any] = self.adapter.json_schema()
        self.name: str = getattr(output_type, "__name__", "output")

    def instructions(self) -> str:
        """Text added to the system prompt so any model knows the expected shape."""
        return (
            "When you give your final answer, reply with only a JSON value matching this "
            f"JSON schema, with no other text: {json.dumps(self.schema, separators=(',', ':'))}"
        )

    def validate(self, text: str) -> tuple[bool, Any, str]:
        """``(ok, value, problem)`` for a final answer."""
        candidate = text.strip()
        m = _FENCE.match(candidate)
        if m:
            candidate = m.group(1)
        try:
            return True, self.adapter.validate_json(candidate), ""
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'value'}: {e['msg']}"
                for e in err.errors(include_url=False)
            )
            return False, None, problems

    def retry_prompt(self, problem: str) -> str:
        """What the model is told after an invalid final answer."""
        return (
            f"Your final answer did not match the required schema ({problem}). "
            "Reply again with only a JSON value matching the schema."
        )
