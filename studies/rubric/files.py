"""Rubric definitions as files: JSON or YAML in, JSON or YAML out (``set_rubric``,
``export_rubric``). The definition itself is checked by ``studies.rubric.definition``."""

import json
from pathlib import Path

import yaml

from ..errors import StudySetupError

MAX_FILE_BYTES = 1024 * 1024
YAML_SUFFIXES = (".yaml", ".yml")


def definition_read(path: Path):
    """The document in a .json, .yaml or .yml file; StudySetupError says what is wrong."""
    if not path.is_file():
        raise StudySetupError(f"There is no file {path}.")
    if path.suffix.lower() not in (".json", *YAML_SUFFIXES):
        raise StudySetupError("Use a .json, .yaml or .yml file.")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise StudySetupError(f"The file is larger than {MAX_FILE_BYTES // 1024} KB.")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise StudySetupError("The file is not UTF-8 text.") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise StudySetupError(f"The file is not valid JSON: {error}.") from None
    try:
        # Safe loading only: plain values, no Python objects.
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise StudySetupError(f"The file is not valid YAML: {error}.") from None


def definition_text(definition: dict, *, fmt: str) -> str:
    if fmt == "yaml":
        return yaml.safe_dump(definition, sort_keys=False, allow_unicode=True, width=100)
    return json.dumps(definition, indent=2, ensure_ascii=False) + "\n"
