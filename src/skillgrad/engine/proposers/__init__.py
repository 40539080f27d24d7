"""The proposers: where a step's edits come from (rules, bootstrapped examples, teacher corrections, small-student
repairs), which run for which student, and the filters they pass. Start at sources.py."""
