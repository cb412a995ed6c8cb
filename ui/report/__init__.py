"""The Report page: the exposure report of one model, book by book."""
