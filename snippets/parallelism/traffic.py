"""What each GPU sends per training step under tensor, sequence and pipeline parallelism, and the pipeline's bubble."""

# --8<-- [start:example]
from gpukb.parallelism import communication as comm
from gpukb.parallelism.pipeline import bubble_fraction, replay, schedule_order

# one transformer block, TP = 4: b = 1, s = 2048, h = 12288, bfloat16
tp = comm.tensor_parallel(batch=1, seq=2048, hidden=12288, tp=4)
print("TP collectives:", comm.collective_counts(tp), "sent per GPU:", comm.sent_bytes(tp) // 2**20, "MiB")
sp = comm.tensor_parallel(batch=1, seq=2048, hidden=12288, tp=4, sequence=True)
print("TP + SP collectives:", comm.collective_counts(sp), "sent per GPU:", comm.sent_bytes(sp) // 2**20, "MiB")

# a pipeline of 4 stages and 8 micro-batches: the formula, and the order 1F1B runs its micro-batches in
print("bubble (p-1)/(m+p-1):", bubble_fraction(4, 8))
played = replay(schedule_order("1F1B", 4, 8))
print("1F1B replayed: bubble", played.bubble, "micro-batches held per stage", played.peak_in_flight)
# --8<-- [end:example]
