"""The three pages of the corpus application.

The data (books/management/commands/seed.py): authors 1-40 wrote one book
each (books 1-40, book i by author i); author 41 wrote books 41-80.
"""
from django.http import HttpResponse

from books.models import Book

PAGE = 40


def _page(rows):
    body = "".join(f"<li>{title} by {name}</li>" for title, name in rows)
    return HttpResponse(f"<ul>{body}</ul>")


def nplus1(request):
    # Books 1-40, 40 different authors. book.author is a lazy ForeignKey:
    # every row selects its author by primary key, one query per book (N+1).
    books = Book.objects.order_by("id")[:PAGE]
    return _page((b.title, b.author.name) for b in books)


def joined(request):
    # The same page with the authors joined into the book query: one query.
    books = Book.objects.select_related("author").order_by("id")[:PAGE]
    return _page((b.title, b.author.name) for b in books)


def same_author(request):
    # Books 41-80, all by author 41. Each Book instance loads its own
    # author, so the same author is selected again for every row: 40
    # identical queries with the identical id.
    books = Book.objects.filter(author_id=41).order_by("id")[:PAGE]
    return _page((b.title, b.author.name) for b in books)


def health(request):
    return HttpResponse("ok")
