/* init_cmd.h — `mhaviz init`: write a starter input for your own sentence. */
#ifndef MHAVIZ_INIT_CMD_H
#define MHAVIZ_INIT_CMD_H

/* Run `mhaviz init` with argv[0] = "init"; returns the exit status. */
int init_command(int argc, char **argv);

#endif
