"""The passages and the conversation every example in this folder runs (each example puts
them in its framework's own in-memory store)."""

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
