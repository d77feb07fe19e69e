"""The URLconf routes to the apps' views."""
from agreement import urls as agreement_urls
from studies import views
