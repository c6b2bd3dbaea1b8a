"""turnscope in a Haystack pipeline, offline.

    pip install -e '.[haystack]'   # from a clone of this repository
    python examples/haystack_pipeline.py

``TurnscopeRewriter`` takes the user's message and the chat history and feeds the
standalone query to Haystack's own ``InMemoryBM25Retriever`` over an
``InMemoryDocumentStore``. The "assistant" answers with the best document, and the
application keeps the history as Haystack ``ChatMessage`` objects.
"""

from __future__ import annotations

import os

# Haystack sends anonymous usage telemetry unless told not to; this example makes no
# network call (set before haystack is imported, which reads it)
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from _corpus import CONVERSATION, PASSAGES  # examples/_corpus.py, beside this script
from haystack import Document, Pipeline  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402

from turnscope.integrations.haystack import TurnscopeRewriter  # noqa: E402


def build_pipeline() -> Pipeline:
    store = InMemoryDocumentStore()
    store.write_documents([Document(content=p) for p in PASSAGES])
    pipeline = Pipeline()
    pipeline.add_component("rewriter", TurnscopeRewriter())
    pipeline.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=2))
    pipeline.connect("rewriter.query", "retriever.query")
    return pipeline


def main() -> None:
    pipeline = build_pipeline()
    history: list[ChatMessage] = []
    for message in CONVERSATION:
        out = pipeline.run({"rewriter": {"query": message, "history": history}},
                           include_outputs_from={"rewriter"})
        trace = out["rewriter"]["trace"]
        docs = out["retriever"]["documents"]
        print(f"user:      {message}")
        print(f"rewritten: {out['rewriter']['query']}  ({trace['reference_class']})")
        for d in docs:
            print(f"  doc:     {d.content}")
        history += [ChatMessage.from_user(message), ChatMessage.from_assistant(docs[0].content or "")]


if __name__ == "__main__":
    main()
