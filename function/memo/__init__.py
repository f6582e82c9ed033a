"""The servicer's memo: the last answer per XR and pass (memo.py), and the reads it was composed
from, compiled and replayed against the next request (replay.py). runner.py consults it before
running a core; the clouds' rules know nothing of it."""
