"""One document type: what every command returns, and what the CLI alone renders and exits with.

A document names its `command`; the JSON schema it follows is derived from that name
(`inductor-doctor/<command>/v1`, `schemas/<command>.schema.json`), and its JSON is one envelope (the
schema id, the doctor's version, the knowledge base's date) followed by its own `body()`. Its exit
code is its own too (`exit_code(policy)`): an interrupted command keeps its signal's code, and each
document says what else fails it (a finding at or above `--fail-on`, a log no known issue explains, a
plan that predicts an issue). `cli.deliver` renders any document and returns that code without
knowing which command made it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Optional, Tuple

from inductor_doctor.core.codes import ExitCode, FailOn

#: `--fail-on` and `--fail-on-warnings` as the command line read them; None where a command has neither.
Policy = Optional[Tuple[FailOn, bool]]


def schema_for(command: str) -> str:
    """The id of a command's JSON schema: the one place it is spelled."""
    return f"inductor-doctor/{command}/v1"


class Document:
    """The base of every document: the envelope, `to_dict()` and `exit_code(policy)`.

    A subclass is a dataclass with a `command` (a field with a default, or the first field where one
    class serves several commands) and a `body()`. Where the envelope's values are its own (a report
    read back, the knowledge base it was judged by) it has `tool_version` / `kb_version` fields; a
    document that carries no knowledge base date (`hook`) or no version (`preflight`'s record) says so
    in `ENVELOPE`.
    """

    #: The envelope's keys, in the order the JSON has them.
    ENVELOPE: ClassVar[Tuple[str, ...]] = ("schema", "tool_version", "kb_version")

    @property
    def schema(self) -> str:
        return schema_for(self.command)

    def envelope(self) -> Dict[str, Any]:
        """What every document's JSON begins with."""
        from inductor_doctor.core.version import __version__

        values = {"schema": self.schema, "tool_version": getattr(self, "tool_version", None) or __version__,
                  "kb_version": getattr(self, "kb_version", None)}
        return {key: values[key] for key in self.ENVELOPE}

    def body(self) -> Dict[str, Any]:
        """The document's own part of its JSON, after the envelope."""
        raise NotImplementedError

    def to_dict(self) -> Dict[str, Any]:
        return {**self.envelope(), **self.body()}

    def exit_code(self, policy: Policy = None) -> int:
        """The contract's exit code: an interrupted command keeps its signal's code; otherwise the
        document's own `outcome`."""
        meta = getattr(self, "meta", None) or {}
        if meta.get("interrupted"):
            return int(meta.get("exit_code", ExitCode.INTERRUPTED))
        return int(self.outcome(policy))

    def outcome(self, policy: Policy) -> ExitCode:
        """What this document's result means for the exit code; 0 unless a subclass says otherwise."""
        return ExitCode.OK
