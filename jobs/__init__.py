"""One runner for the background jobs: the case import, Assign, the recompute, the analysis.

Neutral plumbing: it imports no app of the project, and the apps call it.
"""
