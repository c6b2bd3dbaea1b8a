"""The conversation and passages the drop-in tests share.

A conversation the embedded default resolves (checked with ``Session``): "How is it
treated?" after an exchange about lobular carcinoma becomes "How is lobular carcinoma
treated?"; "What is the capital of Peru?" leaves that subject.
"""

from __future__ import annotations

PASSAGES = (
    "Lobular carcinoma is a breast cancer that begins in the milk-producing glands (lobules).",
    "Lobular carcinoma is treated with surgery, radiation therapy and hormone therapy.",
    "Ductal carcinoma is treated with lumpectomy or mastectomy.",
    "Lima, the capital of Peru, lies on the Pacific coast.",
    "Machu Picchu was built by the Inca emperor Pachacuti around 1450.",
)
TREATMENT = PASSAGES[1]
CAPITAL = PASSAGES[3]
ASK = "Tell me about lobular carcinoma"
ANSWER = PASSAGES[0]
FOLLOW_UP = "How is it treated?"
LEFT = "What is the capital of Peru?"
SUBJECT = "lobular carcinoma"
