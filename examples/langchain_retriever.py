"""turnscope in front of a LangChain retriever, offline.

    pip install -e '.[langchain]'   # from a clone of this repository
    python examples/langchain_retriever.py

The store is LangChain's own ``InMemoryVectorStore`` with a bag-of-words embedding
defined below (no model, no network); the "assistant" answers with the best passage.
Two ways in:

1. ``TurnscopeRetriever`` wraps the store's retriever and keeps the conversation
   itself (``add_answer`` records each answer);
2. ``turnscope_condense() | retriever`` takes ``{"input", "chat_history"}`` like
   ``create_history_aware_retriever`` and needs no LLM for the condense step.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from _corpus import CONVERSATION, PASSAGES  # examples/_corpus.py, beside this script
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.vectorstores import InMemoryVectorStore

from turnscope.integrations.langchain import TRACE_EVENT, TurnscopeRetriever, turnscope_condense

_STOP = {"a", "an", "the", "is", "are", "was", "of", "in", "on", "to", "and", "or", "by",
         "with", "what", "how", "who", "when", "tell", "me", "about", "it", "that", "this"}


class BagOfWords(Embeddings):
    """Word counts hashed into a fixed vector, normalised: a stand-in for a real
    embedding model that ranks passages by the words they share with the query."""

    dim = 512

    def _vector(self, text: str) -> list[float]:
        counts = Counter(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP)
        v = [0.0] * self.dim
        for word, n in counts.items():
            # a stable hash (Python's str hash changes between runs)
            v[sum(ord(c) * 31 ** i for i, c in enumerate(word)) % self.dim] += n
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class PrintRewrite(BaseCallbackHandler):
    """Prints the trace turnscope dispatches as the custom event ``turnscope_rewrite``."""

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        if name == TRACE_EVENT:
            print(f"user: {data['message']!r} -> {data['query']!r} ({data['reference_class']})")


def main() -> None:
    store = InMemoryVectorStore(BagOfWords())
    store.add_documents([Document(page_content=p) for p in PASSAGES])
    base = store.as_retriever(search_kwargs={"k": 2})

    print("1. TurnscopeRetriever keeping the conversation")
    retriever = TurnscopeRetriever(retriever=base)
    for message in CONVERSATION:
        docs = retriever.invoke(message)
        print(f"user:      {message}")
        print(f"rewritten: {docs[0].metadata['turnscope']['query']}")
        for d in docs:
            print(f"  doc:     {d.page_content}")
        retriever.add_answer(docs[0].page_content)  # the assistant's (extractive) answer

    print("\n2. turnscope_condense() | retriever, history passed in")
    chain = turnscope_condense() | base
    printer = PrintRewrite()
    history: list[BaseMessage] = []
    for message in CONVERSATION:
        docs = chain.invoke({"input": message, "chat_history": history},
                            config={"callbacks": [printer]})
        print(f"  doc: {docs[0].page_content}")
        history += [HumanMessage(message), AIMessage(docs[0].page_content)]

if __name__ == "__main__":
    main()
