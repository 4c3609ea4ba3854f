/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The dracut integration (dracut/module-setup.sh.in): whether it is on and
 * which command rebuilds this machine's initramfs, shared by duress check,
 * add --boot and sign so that a dracut machine gets no initramfs-tools
 * advice.
 */
#define DURESS_DRACUT_CONF_DIR "/etc/dracut.conf.d"
#define DURESS_DRACUT_CONF_FILE "pam-duress.conf"
#define DURESS_DRACUT_CONF_LINE "add_dracutmodules+=\" pam-duress \""

struct duress_dracut {
	const char *dir; /* the config directory read */
	bool on;         /* a config there adds the module */
	bool builder;    /* dracut builds the initramfs: on, or dracut without update-initramfs */
	char file[PATH_MAX]; /* on: the config file */
	unsigned line;       /* on: the line adding it */
};

/*
 * Fills d from dir (NULL: DURESS_DRACUT_CONF_DIR): on when a *.conf file
 * there (in name order, as dracut reads them) has an uncommented line
 * assigning add_dracutmodules (+= or =, quoted or not) a value with the
 * word pam-duress.  builder, when it is off: PATH has dracut and no
 * update-initramfs (Debian's dracut conflicts with initramfs-tools; Fedora
 * has no update-initramfs).
 */
void duress_dracut_find(const char *dir, struct duress_dracut *d);

/* The command that rebuilds the initramfs, as a fix says it. */
const char *duress_dracut_rebuild(const struct duress_dracut *d);

/* Where programs are looked for when PATH is unset or empty. */
#define DURESS_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/*
 * The PATH a program the CLI runs gets: the caller's, but
 * DURESS_DEFAULT_PATH as root (sudo may keep the caller's PATH, and such a
 * program, a shell script, runs others by it) or when it is unset or empty.
 */
const char *duress_child_path(void);

/*
 * Whether PATH (DURESS_DEFAULT_PATH when unset or empty) has the program
 * name: its path in out.  As root, only a program no other user could have
 * put there or changed (its resolved path root's all the way down); out is
 * then that resolved path.
 */
bool duress_find_program(const char *name, char *out, size_t len);
