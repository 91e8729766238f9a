"""Reading and writing the files a user gives and gets: tables (:mod:`.tables`), predictions and
train sizes (:mod:`.predictions`), reference rows (:mod:`.reference`), feature and embedding
tables (:mod:`.features`, :mod:`.embeddings`), atomic files and JSON (:mod:`.atomic`) and output
folders (:mod:`.outdir`). Every bad input file raises :class:`medeval.errors.InputError`.
"""
