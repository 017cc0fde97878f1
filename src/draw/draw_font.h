/* draw_font.h — the TrueType font text is drawn in (draw_font.c). Part of
 * draw.h (which includes it). */
#ifndef MHAVIZ_DRAW_FONT_H
#define MHAVIZ_DRAW_FONT_H

#include <stddef.h>

typedef struct DrawFont DrawFont;

/* Load the TrueType/OpenType font file at path (NULL: DejaVu Sans at its
 * Debian path). Returns MHAVIZ_OK, MHAVIZ_EIO (cannot read the file, or not
 * a font; err names the file) or MHAVIZ_ENOMEM. On success *out is owned by
 * the caller and freed with draw_font_close. stb_truetype trusts the font
 * it reads: load only the font the tool chooses or the user names. */
int draw_font_open(DrawFont **out, const char *path, char *err, size_t errlen);

/* Free f; NULL is fine. */
void draw_font_close(DrawFont *f);

#endif
