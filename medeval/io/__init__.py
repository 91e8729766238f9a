"""Reading and writing the files a user gives and gets; every bad input file raises
:class:`medeval.errors.InputError`."""
