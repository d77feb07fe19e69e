"""A match on the status (issue 37: slipped past the AST test)."""


def phase(study):
    match study.status:
        case "draft":  # flagged: lifecycle-status-compared
            return "set-up"
        case Study.Status.OPEN:  # flagged: lifecycle-status-compared
            return "rating"
        case "closed" | "unblinded":  # flagged: lifecycle-status-compared
            return "done"
    return ""
