/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sealed copy: exactly the bytes that were hashed are the ones that run. */
#include "memfd.h"
#include "write.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sodium.h>

#include "runner.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

int duress_memfd_new(void)
{
	int fd = memfd_create(DURESS_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);

	/* Kernels before 6.3 do not know MFD_EXEC; their memfds are executable anyway. */
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create(DURESS_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	return duress_fd_above_stdio(fd);
}

int duress_stream_content(int fd, uint64_t max, int memfd, unsigned char *buf,
			  unsigned char hash[DURESS_HASH_LEN], bool *elf, uint64_t *ret_len)
{
	crypto_hash_sha256_state h;
	uint64_t total = 0;
	ssize_t n;
	int r;

	*elf = false;
	crypto_hash_sha256_init(&h);
	while ((n = read(fd, buf, DURESS_READ_CHUNK)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EIO;
		if (total == 0)
			*elf = n >= 4 && memcmp(buf, "\177ELF", 4) == 0;
		total += (uint64_t)n;
		if (total > max)
			return -EFBIG;
		crypto_hash_sha256_update(&h, buf, (unsigned long long)n);
		if (memfd >= 0 && (r = duress_write_all(memfd, buf, (size_t)n)) < 0)
			return r;
	}
	crypto_hash_sha256_final(&h, hash);
	*ret_len = total;
	if (memfd >= 0 &&
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		return -errno;
	return 0;
}
