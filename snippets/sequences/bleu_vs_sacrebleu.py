"""gpukb's BLEU next to sacreBLEU's on the sentences of sacreBLEU's own README."""

# ruff: noqa: E402  (each section is shown on the page on its own, so it imports what it uses)

# --8<-- [start:corpus]
import sacrebleu

from gpukb.sequences.bleu import corpus_bleu

hypotheses = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
references = [  # reference streams: each has one reference per hypothesis
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
print("gpukb    ", corpus_bleu(hypotheses, references))
print("sacrebleu", sacrebleu.corpus_bleu(hypotheses, references))
for tok in ("13a", "none"):
    ours = corpus_bleu(hypotheses, references, tokenize_method=tok).score
    theirs = sacrebleu.corpus_bleu(hypotheses, references, tokenize=tok).score
    print(f"tokenize={tok!r:6}: gpukb {ours:.4f}, sacrebleu {theirs:.4f}")
# --8<-- [end:corpus]

# --8<-- [start:empty-reference]
import sacrebleu

from gpukb.sequences.bleu import sentence_bleu

hypothesis = "Yes."  # an example of ours: two tokens, 'Yes' and '.'
print("sacrebleu, refs ['', 'Yes, he did it.']:", sacrebleu.sentence_bleu(hypothesis, ["", "Yes, he did it."]))
print("sacrebleu, refs ['Yes, he did it.']:    ", sacrebleu.sentence_bleu(hypothesis, ["Yes, he did it."]))
try:
    sentence_bleu(hypothesis, ["", "Yes, he did it."])
except ValueError as err:
    print("gpukb:", err)
# --8<-- [end:empty-reference]
