/*
 * Bulk baseline: the cost of the lookups themselves, in C over libmaxminddb.
 *
 * What it does, per input line (one IPv4 address per line on stdin):
 *   1. parses the address with inet_pton();
 *   2. city lookup: MMDB_lookup_sockaddr() on the DB-IP city database, then
 *      MMDB_get_entry_data_list() to decode the WHOLE record (every key of the
 *      map: city, country_code, latitude, longitude, postcode, state1, state2,
 *      timezone), as netintel decodes the whole record;
 *   3. second lookup, standing in for netintel's ASN lookup (there is no ASN
 *      mmdb in the project; netintel reads its own asn.idx): another
 *      MMDB_lookup_sockaddr() of the same address in the same city database,
 *      then MMDB_get_value() of one small field (country_code), i.e. one more
 *      full tree walk plus one small decode;
 *   4. writes one CSV line (ip, the eight city fields, the second lookup's
 *      value) to a 1 MiB fully buffered stdout. No CSV quoting is done.
 * At the end it prints "<lines> lines, <found> found, <notfound> not found,
 * <errors> errors" on stderr.
 *
 * The database is opened with MMDB_MODE_MMAP (libmaxminddb's only mode): the
 * file is mapped, and the page cache is warm after the first run.
 *
 * Build: gcc -O2 -o mmdb-loop mmdb-loop.c -lmaxminddb
 * Usage: mmdb-loop CITY.mmdb < ips.txt > out.csv
 */
#include <arpa/inet.h>
#include <maxminddb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static char out_buffer[1 << 20];

/* Writes one decoded scalar value, or nothing for a type the city record does not use. */
static void put_value(const MMDB_entry_data_s *data) {
  switch (data->type) {
    case MMDB_DATA_TYPE_UTF8_STRING:
      fwrite(data->utf8_string, 1, data->data_size, stdout);
      break;
    case MMDB_DATA_TYPE_DOUBLE:
      printf("%.6g", data->double_value);
      break;
    case MMDB_DATA_TYPE_FLOAT:
      printf("%.6g", (double)data->float_value);
      break;
    case MMDB_DATA_TYPE_UINT16:
      printf("%u", (unsigned)data->uint16);
      break;
    case MMDB_DATA_TYPE_UINT32:
      printf("%u", (unsigned)data->uint32);
      break;
    case MMDB_DATA_TYPE_INT32:
      printf("%d", (int)data->int32);
      break;
    case MMDB_DATA_TYPE_BOOLEAN:
      fputs(data->boolean ? "true" : "false", stdout);
      break;
    default:
      break;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CITY.mmdb < ips.txt\n", argv[0]);
    return 2;
  }
  MMDB_s city;
  int status = MMDB_open(argv[1], MMDB_MODE_MMAP, &city);
  if (status != MMDB_SUCCESS) {
    fprintf(stderr, "mmdb-loop: cannot open %s: %s\n", argv[1], MMDB_strerror(status));
    return 1;
  }
  setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);

  char *line = NULL;
  size_t capacity = 0;
  ssize_t length;
  unsigned long lines = 0, found = 0, not_found = 0, errors = 0;
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;

  while ((length = getline(&line, &capacity, stdin)) != -1) {
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) line[--length] = '\0';
    if (length == 0 || line[0] == '#') continue;
    lines++;
    if (inet_pton(AF_INET, line, &address.sin_addr) != 1) {
      errors++;
      fputs(line, stdout);
      fputs(",error\n", stdout);
      continue;
    }
    fputs(line, stdout);

    /* 2. City lookup, whole record decoded. */
    int mmdb_error = MMDB_SUCCESS;
    MMDB_lookup_result_s result = MMDB_lookup_sockaddr(&city, (struct sockaddr *)&address, &mmdb_error);
    if (mmdb_error != MMDB_SUCCESS) {
      errors++;
    } else if (!result.found_entry) {
      not_found++;
    } else {
      MMDB_entry_data_list_s *list = NULL;
      status = MMDB_get_entry_data_list(&result.entry, &list);
      if (status != MMDB_SUCCESS) {
        errors++;
      } else {
        found++;
        /* The record is one flat map: MAP, then key, value, key, value, ... */
        MMDB_entry_data_list_s *item = list;
        if (item != NULL && item->entry_data.type == MMDB_DATA_TYPE_MAP) {
          for (item = item->next; item != NULL && item->next != NULL; item = item->next->next) {
            putchar(',');
            put_value(&item->next->entry_data);
          }
        }
      }
      MMDB_free_entry_data_list(list);
    }

    /* 3. Second lookup, standing in for the ASN lookup: tree walk + one small value. */
    MMDB_lookup_result_s second = MMDB_lookup_sockaddr(&city, (struct sockaddr *)&address, &mmdb_error);
    putchar(',');
    if (mmdb_error == MMDB_SUCCESS && second.found_entry) {
      MMDB_entry_data_s value;
      if (MMDB_get_value(&second.entry, &value, "country_code", NULL) == MMDB_SUCCESS && value.has_data) {
        put_value(&value);
      }
    }
    putchar('\n');
  }
  free(line);
  fflush(stdout);
  MMDB_close(&city);
  fprintf(stderr, "%lu lines, %lu found, %lu not found, %lu errors\n", lines, found, not_found, errors);
  return 0;
}
