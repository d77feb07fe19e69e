"""Not model writes: a dict, the cache, a file, a workbook, a service."""
from django.core.cache import cache
from django.core.files.storage import default_storage

from annotation.services import rating_submit


def view(request, context, workbook, stream, seen):
    context.update({"a": 1})
    context.update(extra=2)
    context.update(extra, b=2)
    cache.delete("key")
    default_storage.save("name.txt", stream)
    default_storage.delete("name.txt")
    workbook.save(stream)
    seen.add(1)
    request.session.update({"k": 1})
    rating_submit(assignment=None, payload={})
