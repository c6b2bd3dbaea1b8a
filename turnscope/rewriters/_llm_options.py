"""The LLM backend's option defaults and types (a leaf module).

:mod:`turnscope.rewriters._factory` reads them to build a rewriter without importing the
backend (which needs the optional ``httpx``), and the backend's modules (``_llm``,
``_llm_config``…) read them too; neither side imports the other for them, so the factory
imports the backend only when an ``llm`` rewriter is built and nothing imports it back.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT",
    "REWRITER_KINDS",
    "SLOT_MODES",
    "SYSTEM_ROLE_MODES",
    "SlotMode",
    "SystemRole",
]

#: the kinds ``make_rewriter`` accepts
REWRITER_KINDS = ("embedded", "llm")
#: Seconds per HTTP attempt. A rewrite sits on the request path of a user turn, so a
#: backend slower than this is treated as down for this turn (the embedded rewrite answers).
DEFAULT_TIMEOUT = 10.0
#: Tokens the model may generate per answer (sent as ``max_tokens`` on every request). The
#: answer is one small JSON object: a query of a few dozen tokens plus at most a dozen
#: entities fits in about 200. Without a bound, one runaway answer (a small model that
#: never closes its JSON) keeps a single-slot local server busy for minutes and times out
#: the calls queued behind it.
DEFAULT_MAX_TOKENS = 256
#: Environment variable holding the API key; read only when a request is made, and
#: optional (local servers need none).
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: ``same-call``: the model's entities fill the slots; ``extract``: the embedded extractor
#: runs on the model's query.
SLOT_MODES = ("same-call", "extract")
SlotMode = Literal["same-call", "extract"]
#: Where the instructions go. ``True``: a ``system`` message; ``False``: merged into the
#: first user message (for chat templates that have no system role and would drop it
#: silently); ``"auto"``: a system message until the server rejects the system role, then
#: merged for the rest of the rewriter's life.
SYSTEM_ROLE_MODES: tuple[bool | str, ...] = (True, False, "auto")
SystemRole: TypeAlias = bool | Literal["auto"]
