from django import template

register = template.Library()


@register.filter
def stat(value) -> str:
    """Three decimals, or an en dash where a statistic is undefined."""
    if value is None or value == "":
        return "–"
    return f"{float(value):.3f}"


@register.filter
def get(mapping, key):
    return (mapping or {}).get(key)


@register.filter
def percent(value) -> str:
    """A share as a percentage with one decimal, or an en dash where undefined."""
    if value is None or value == "":
        return "–"
    return f"{100 * float(value):.1f}%"


@register.filter
def pvalue(value) -> str:
    """A p-value as reported: three decimals, or "< 0.001"."""
    if value is None or value == "":
        return "–"
    value = float(value)
    return "< 0.001" if value < 0.001 else f"{value:.3f}"
