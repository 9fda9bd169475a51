"""The tools around a build: `infer` (a spec from raw data), `diff` (two versions compared),
`report` (a dataset's HTML page), `verify` (every record checked against the spec), `generate`
(the input module as a file).
"""
