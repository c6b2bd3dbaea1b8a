"""Training the shipped learned models (``turnscope train``).

Nothing at run time imports this package: it may import anything in turnscope, and the CLI's
``train`` command imports it inside the command. Layout: :mod:`.shift` (the topic-shift
detector, with :mod:`.shift_embed`, its embedded conversations), :mod:`.neural_data` (the
tagger's synthetic follow-ups, made by :mod:`.neural_forms`), :mod:`.neural` (the tagger),
:mod:`.resolver` (the ranker and the gate, their thresholds chosen by :mod:`.calibration`).
"""
