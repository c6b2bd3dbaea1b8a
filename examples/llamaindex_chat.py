"""turnscope as the condense step of a LlamaIndex chat engine, offline.

    pip install -e '.[llamaindex]'   # from a clone of this repository
    python examples/llamaindex_chat.py

``TurnscopeChatEngine`` is LlamaIndex's ``CondenseQuestionChatEngine`` with its LLM
condense call replaced by turnscope. The index is LlamaIndex's own
``SimpleKeywordTableIndex`` (keywords by regex: no embedding model) and the answer
comes from ``MockLLM``, which echoes its prompt: with a prompt that is just the
retrieved passage, the "answer" is the best passage, as an extractive stand-in for a
real LLM. No network, no API key.
"""

from __future__ import annotations

import os
import sys

# LlamaIndex's keyword table breaks ties between passages that match a question equally well
# by the order of a set of strings, which Python salts per process: pin the salt, so every
# run retrieves the same passages. (With salts that retrieve the "fifteenth-century citadel"
# passage for "Tell me about Machu Picchu", turnscope's gate gives Machu Picchu 0.75 for
# "Who built it?", under its 0.8, and the question stays as typed: precision first.)
if os.environ.get("PYTHONHASHSEED") != "3":
    os.environ["PYTHONHASHSEED"] = "3"
    os.execv(sys.executable, [sys.executable, *sys.argv])

from _corpus import CONVERSATION, PASSAGES  # examples/_corpus.py, beside this script
from llama_index.core import PromptTemplate, SimpleKeywordTableIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode

from turnscope.integrations.llamaindex import TurnscopeChatEngine


def main() -> None:
    llm = MockLLM()
    # fixed node ids: the tie-break above also iterates a set of node ids (random uuids by default)
    index = SimpleKeywordTableIndex([TextNode(text=p, id_=f"passage-{k}") for k, p in enumerate(PASSAGES)],
                                    llm=llm)
    query_engine = index.as_query_engine(
        llm=llm, text_qa_template=PromptTemplate("{context_str}"), num_chunks_per_query=1)
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
