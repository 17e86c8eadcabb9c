from django.urls import path

from books import views

urlpatterns = [
    path("books/nplus1", views.nplus1),
    path("books/joined", views.joined),
    path("books/same-author", views.same_author),
    path("health", views.health),
]
