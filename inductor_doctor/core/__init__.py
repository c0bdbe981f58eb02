"""The vocabulary every layer speaks: types, data and small helpers that import nothing above them.

`model` (issues, findings, verdicts), `facts` (what the probe found), `plan_input` (what a plan
installs), `artifact_facts` (what a compiled artifact was built for), `releases` (the release
snapshot), `codes`, `envvars`, `paths`, `files`, `hostlist`, `version`. Everything else in the
package may import these; they import only each other and the standard library.
"""
