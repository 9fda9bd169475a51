"""The tools around a build: `infer` (a spec from raw data), `diff` (two versions compared),
`verify` (every record checked against the spec), `generate` (the input module as a file). They
sit above build/ and read/, which never import them; a dataset's HTML page (`tb.report`) is a
reader's, in read/report/.
"""
