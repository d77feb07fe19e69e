"""Built-in rubrics. The reference rubric is the one in the validator instructions, verbatim."""

REFERENCE_RUBRIC = {
    "name": "Strategic reasoning (5 dimensions, 20 points)",
    "description": (
        "Evaluate responses based solely on rubric criteria, not on stylistic preferences "
        "or agreement with conclusions."
    ),
    "dimensions": [
        {
            "key": "depth",
            "name": "Depth of Analysis",
            "kind": "counted",
            "config": {
                "unit": "factors",
                "item": "factor",
                "measure": (
                    "Count distinct factors, considerations, or variables identified in the "
                    "reasoning."
                ),
                "bands": [[0, 0], [2, 2], [4, 4], [6, 5]],
                "half_weight_hint": "Listed but not integrated into the analysis",
                "example": (
                    'A response discussing "competitive pressure, scientific norms, '
                    'irreversible misuse risk, option value, and monitoring triggers" would '
                    "count 5 distinct factors → 4 points."
                ),
                "edge_cases": (
                    "If a response lists a factor but doesn't integrate it into the analysis, "
                    "count it at half-weight."
                ),
            },
        },
        {
            "key": "evidence",
            "name": "Evidence Integration",
            "kind": "checklist",
            "config": {
                "measure": "Checklist evaluation of evidence use. 1 point per item met.",
                "criteria": [
                    {
                        "label": "Evidence cited?",
                        "help": (
                            "Includes references to precedents, research, data, or domain knowledge"
                        ),
                    },
                    {
                        "label": "Source credibility assessed?",
                        "help": "Evaluates reliability or limitations of cited evidence",
                    },
                    {
                        "label": "Evidence quality evaluated?",
                        "help": ("Discusses strength, uncertainty, or applicability of evidence"),
                    },
                ],
                "example": (
                    '"Prior research shows X; however, this study had limited sample size" '
                    "would score 2/3 (evidence cited + quality evaluated, but no source "
                    "credibility assessment of the prior research itself)."
                ),
                "edge_cases": (
                    'Implicit evidence references (e.g., "common knowledge in the field") '
                    "count as cited evidence but rarely include credibility assessment."
                ),
            },
        },
        {
            "key": "alternatives",
            "name": "Alternative Consideration",
            "kind": "counted",
            "config": {
                "unit": "alternatives",
                "item": "alternative",
                "measure": (
                    "Count of alternative approaches, perspectives, or scenarios examined."
                ),
                "bands": [[0, 0], [1, 2], [2, 4], [3, 5]],
                "half_weight_hint": "Listed without analysis",
                "example": (
                    'A response proposing "staged release" while also discussing "full '
                    'delay" and "immediate open-weight" as alternatives would count 2 '
                    "explicit alternatives → 4 points."
                ),
                "edge_cases": (
                    '"We could do X or not-X" does not count as examining an alternative '
                    "unless not-X is substantively analyzed. Listing alternatives without "
                    "analysis counts at half-weight."
                ),
            },
        },
        {
            "key": "structure",
            "name": "Logical Structure",
            "kind": "checklist",
            "config": {
                "measure": ("Human judgment with criteria checklist. 1 point per criterion met."),
                "criteria": [
                    {
                        "label": "Clear premises stated?",
                        "help": (
                            "Response identifies assumptions, constraints, or starting conditions"
                        ),
                    },
                    {
                        "label": "Analysis follows from premises?",
                        "help": "Reasoning steps connect logically",
                    },
                    {
                        "label": "Conclusion supported by analysis?",
                        "help": "Recommendations tie back to the analysis",
                    },
                ],
                "example": (
                    '"Given budget constraints (premise), we should prioritize high-ROI '
                    "options (analysis), therefore allocate 40% to A and 35% to B "
                    '(conclusion)" would score 3/3.'
                ),
                "edge_cases": (
                    "If a response has strong analysis but weak premises, or strong premises "
                    "but a conclusion that doesn't follow, score accordingly."
                ),
            },
        },
        {
            "key": "actionability",
            "name": "Actionability",
            "kind": "counted",
            "config": {
                "unit": "recommendations",
                "item": "recommendation",
                "measure": "Count of concrete, specific recommendations provided.",
                "bands": [[0, 0], [1, 2], [3, 4]],
                "half_weight_hint": "Vague recommendation",
                "example": (
                    '"Allocate 40/35/25 across A/B/C" (1 recommendation), "pre-register '
                    'update rules" (2), "keep 15% reserve for opportunistic spends" (3) → 4 '
                    "points."
                ),
                "edge_cases": (
                    'Vague recommendations ("do more research") count at half-weight. Nested '
                    'recommendations (e.g., "allocate X, with sub-allocations Y and Z") count '
                    "as one."
                ),
            },
        },
    ],
}

PRESETS = {"reference": REFERENCE_RUBRIC}
