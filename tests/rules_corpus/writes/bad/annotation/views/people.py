"""Group membership and user creation in a view (issue 37: not in the old list)."""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group


def invite(request, study):
    user = get_user_model().objects.create_user(username="x", password=None)  # flagged: writes-outside-services
    admin = get_user_model().objects.create_superuser("root", "r@x", "pw")  # flagged: writes-outside-services
    user.groups.add(Group.objects.get(name="Coordinators"))  # flagged: writes-outside-services
    user.groups.remove(Group.objects.get(name="Raters"))  # flagged: writes-outside-services
    admin.user_permissions.clear()  # flagged: writes-outside-services
    user.set_password("concord-demo")  # flagged: writes-outside-services
    user.save()  # flagged: writes-outside-services
    form = request.form
    form.save(commit=False)  # flagged: writes-outside-services
    study.memberships.filter(user=user).update(status="paused")  # flagged: writes-outside-services
    return user
