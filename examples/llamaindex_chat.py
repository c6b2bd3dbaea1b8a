"""turnscope as the condense step of a LlamaIndex chat engine, offline.

    pip install 'turnscope[llamaindex]'
    python examples/llamaindex_chat.py

``TurnscopeChatEngine`` is LlamaIndex's ``CondenseQuestionChatEngine`` with its LLM
condense call replaced by turnscope. The index is LlamaIndex's own
``SimpleKeywordTableIndex`` (keywords by regex: no embedding model) and the answer
comes from ``MockLLM``, which echoes its prompt: with a prompt that is just the
retrieved passage, the "answer" is the best passage, as an extractive stand-in for a
real LLM. No network, no API key.
"""

from __future__ import annotations

from llama_index.core import Document, PromptTemplate, SimpleKeywordTableIndex
from llama_index.core.llms import MockLLM

from turnscope.integrations.llamaindex import TurnscopeChatEngine

PASSAGES = [
    "Lobular carcinoma is a breast cancer that begins in the milk-producing glands (lobules).",
    "Lobular carcinoma is treated with surgery, radiation therapy and hormone therapy.",
    "Ductal carcinoma is treated with lumpectomy or mastectomy.",
    "Lima, the capital of Peru, lies on the Pacific coast.",
    "Machu Picchu is a fifteenth-century Inca citadel in the Andes of southern Peru.",
    "Machu Picchu was built by the Inca emperor Pachacuti around 1450.",
]

CONVERSATION = [
    "Tell me about lobular carcinoma",
    "How is it treated?",
    "What is the capital of Peru?",
    "Tell me about Machu Picchu",
    "Who built it?",
]


def main() -> None:
    llm = MockLLM()
    index = SimpleKeywordTableIndex.from_documents([Document(text=p) for p in PASSAGES], llm=llm)
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
