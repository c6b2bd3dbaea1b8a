"""turnscope as the condense step of a LlamaIndex chat engine, offline.

    pip install -e '.[llamaindex]'   # from a clone of this repository
    python examples/llamaindex_chat.py

``TurnscopeChatEngine`` is LlamaIndex's ``CondenseQuestionChatEngine`` with its LLM
condense call replaced by turnscope. The retriever is a few lines of keyword overlap (no
embedding model) with a fixed tie-break, and the answer comes from ``MockLLM``, which
echoes its prompt: with a prompt that is just the retrieved passage, the "answer" is the
best passage, as an extractive stand-in for a real LLM. No network, no API key.
"""

from __future__ import annotations

import re

from _corpus import CONVERSATION, PASSAGES  # examples/_corpus.py, beside this script
from llama_index.core import PromptTemplate
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import get_response_synthesizer
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from turnscope.integrations.llamaindex import TurnscopeChatEngine

_STOP = frozenset("the a an is of in on and or to by with me about tell what who how it its".split())


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


class KeywordRetriever(BaseRetriever):
    """The passage sharing the most words with the query; a tie goes to the earlier passage.

    (LlamaIndex's ``SimpleKeywordTableIndex`` breaks such ties by iterating a set of
    strings, whose order Python salts per process: the same question retrieved different
    passages from run to run.)"""

    def __init__(self, nodes: list[TextNode]) -> None:
        super().__init__()
        self._nodes = nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        asked = _words(query_bundle.query_str)
        scored = [(len(asked & _words(n.get_content())), -k, n) for k, n in enumerate(self._nodes)]
        best = max(scored, key=lambda t: (t[0], t[1]))
        return [NodeWithScore(node=best[2], score=float(best[0]))] if best[0] else []


def main() -> None:
    llm = MockLLM()
    retriever = KeywordRetriever([TextNode(text=p, id_=f"passage-{k}") for k, p in enumerate(PASSAGES)])
    query_engine = RetrieverQueryEngine(
        retriever, get_response_synthesizer(llm=llm, text_qa_template=PromptTemplate("{context_str}")))
    engine = TurnscopeChatEngine.from_defaults(query_engine)
    for message in CONVERSATION:
        response = engine.chat(message)  # the engine's memory keeps the history
        trace = (response.metadata or {})["turnscope"]
        print(f"user:      {message}")
        print(f"rewritten: {trace['query']}  ({trace['reference_class']})")
        for node in response.source_nodes:
            print(f"  node:    {node.node.get_content()}")
        print(f"answer:    {response.response}")


if __name__ == "__main__":
    main()
