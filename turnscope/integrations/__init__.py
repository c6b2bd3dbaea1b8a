"""Drop-ins that put turnscope in front of a RAG framework's retriever.

One module per framework; each imports its framework when it is imported and, when
the framework is missing, raises an ImportError naming the extra to install:

- :mod:`turnscope.integrations.langchain` (``pip install 'turnscope[langchain]'``):
  ``TurnscopeRetriever``, a ``BaseRetriever`` that rewrites before calling the one it
  wraps, and ``turnscope_condense()``, a ``Runnable`` that replaces the LLM condense step
  of ``create_history_aware_retriever``;
- :mod:`turnscope.integrations.llamaindex` (``pip install 'turnscope[llamaindex]'``):
  ``TurnscopeChatEngine``, a ``CondenseQuestionChatEngine`` whose condense call is
  turnscope;
- :mod:`turnscope.integrations.haystack` (``pip install 'turnscope[haystack]'``):
  ``TurnscopeRewriter``, a Haystack 2.x ``@component``.

Importing this package imports no framework.
"""
