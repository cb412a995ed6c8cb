"""The Leakage page: reference corpora, overlap, book frequency, membership scores, surprisal and DE-COP."""
