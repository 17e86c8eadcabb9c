from django.core.management.base import BaseCommand
from django.db import transaction

from books.models import Author, Book


class Command(BaseCommand):
    help = "Authors 1-40 with one book each (books 1-40), author 41 with books 41-80."

    @transaction.atomic
    def handle(self, *args, **options):
        Book.objects.all().delete()
        Author.objects.all().delete()
        authors = Author.objects.bulk_create(
            Author(id=i, name=f"Author {i}") for i in range(1, 42)
        )
        Book.objects.bulk_create(
            Book(id=i, title=f"Book {i}", author=authors[i - 1]) for i in range(1, 41)
        )
        Book.objects.bulk_create(
            Book(id=i, title=f"Book {i}", author=authors[40]) for i in range(41, 81)
        )
        self.stdout.write("seeded 41 authors, 80 books")
