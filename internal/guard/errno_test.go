package guard

import "syscall"

var errEMFILE = syscall.EMFILE
